// One timed iteration of each point-to-point pattern (what OMB's loops do between timer
// reads). The harness times them; the descriptors in this folder choose one.
#pragma once

#include "pt2pt/pt2pt.hpp"

namespace cb {

// osu_latency: blocking send then receive; the peer mirrors it.
void ping_pong(Pt2ptContext& c);
// osu_bw / osu_mbw_mr: sender posts a window of sends and waits for a 1-byte ack;
// receiver posts the window of receives, then acks.
void window_with_ack(Pt2ptContext& c);
// osu_bw_fan_in / osu_bw_fan_out (OMB 7.5): the sender posts a window to each of its peers
// (the parent's children, or a child's parent), the receiver a window from each; then the
// receiver sends each peer a 1-byte ack, one after another (c.acks: the sender's receives
// of them).
void fan_window(Pt2ptContext& c);
// osu_bibw: both sides post a window of receives and a window of sends, then wait.
void exchange_window(Pt2ptContext& c);

// The same three with persistent requests (osu_latency_persistent, osu_bw_persistent,
// osu_bibw_persistent): MPI_Start / MPI_Startall and wait, requests made once per size.
void persistent_ping_pong(Pt2ptContext& c);
void persistent_window_with_ack(Pt2ptContext& c);
void persistent_exchange_window(Pt2ptContext& c);
// osu_partitioned_latency: the ping-pong with partitioned requests; the sender marks each
// partition ready (MPI_Pready) after MPI_Start, the receiver waits for the whole message.
void partitioned_ping_pong(Pt2ptContext& c);

}  // namespace cb
