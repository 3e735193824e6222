// What a point-to-point benchmark supplies: its communication pattern for one timed
// iteration and how the harness turns the time into a figure.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/runner.hpp"

namespace cb {

enum class Role : uint8_t { Sender, Receiver, Idle };

inline constexpr int kDataTag = 1;
inline constexpr int kAckTag = 2;

// Everything one iteration needs, set up by the harness for the current message size.
struct Pt2ptContext {
  Backend& be;
  Role role = Role::Idle;
  int peer = -1;
  Buf send, recv;               // this size's slice of the message buffers
  Buf ack;                      // 1 byte, host
  std::vector<P2POp> acks;      // fan: the 1-byte acks, one per peer (sender receives them)
  std::vector<P2POp> sends;     // window x send to peer
  std::vector<P2POp> recvs;     // window x receive from peer
  std::vector<P2POp> exchange;  // receives then sends (bidirectional window)
  // Persistent benchmarks (Pt2ptSpec::persistent, mpi only): the same operations as
  // MPI_Send_init / MPI_Recv_init requests, made for each size, started each iteration.
  WaitMode wait = WaitMode::Spin;
  std::vector<MPI_Request> p_sends, p_recvs, p_exchange;
  MPI_Request p_ack = MPI_REQUEST_NULL;  // sender: receive of the ack; receiver: its send
  int partitions = 1;  // partitioned: MPI_Pready for each before the send completes
};

enum class Pt2ptMetric : uint8_t {
  Latency,      // one-way: iteration time / 2 (a ping-pong)
  Bandwidth,    // bytes x window x directions / iteration time, MB/s (1e6 B)
  MessageRate,  // Bandwidth summed over pairs, plus messages per second
};

// OMB 7.5's congestion benchmarks (pt2pt/fan.hpp): a parent and its children.
enum class Fan : uint8_t {
  None,
  In,   // osu_bw_fan_in: every child sends a window to the parent
  Out,  // osu_bw_fan_out: the parent sends a window to every child
};
// More than one sender per rank (OMB's -t SENDERS:RECEIVERS, pt2pt/workers.hpp).
enum class Workers : uint8_t {
  None,
  Threads,    // osu_latency_mt: ping-pong threads, MPI_THREAD_MULTIPLE
  Processes,  // osu_latency_mp: fork()ed children that sleep while the ranks ping-pong
};

struct Pt2ptSpec {
  Pt2ptMetric metric;
  int directions;     // 2 for bibw: bytes counted per iteration = directions x window x size
  bool uses_window;   // -W applies
  bool both_receive;  // both sides receive data (ping-pong, bibw): both validate
  bool multi_pair;    // any even rank count, pairs r <-> r + pairs; otherwise exactly 2 ranks
  void (*iteration)(Pt2ptContext&);
  bool persistent = false;   // MPI persistent requests (osu_*_persistent): --backend mpi only
  bool partitioned = false;  // MPI 4.0 partitioned requests (MPI_Psend_init, MPI_Precv_init)
  Fan fan = Fan::None;       // the fan layout instead of pairs (multi_pair is ignored)
  Workers workers = Workers::None;
};

// Role and peer of `rank`; throws UsageError when the rank count does not fit the spec.
void pt2pt_layout(const Pt2ptSpec& spec, int rank, int nranks, int pairs, Role& role, int& peer);

// What a bandwidth figure is compared with (docs/methodology.md, "% of line rate"): the line
// rate x directions x links, links being the smaller of the number of nodes that hold
// senders and of those that hold receivers (ranks r < pairs send to r + pairs). Only when
// every pair's two ranks are on different nodes: within a node shared memory, not the NIC,
// carries the data, and the line rate bounds nothing.
struct LineRateBound {
  double bound_gbps = 0;  // 0: no percentage (why_not says why)
  int links = 0;
  int cross_node_pairs = 0;
  std::string why_not;
};
// node_of_rank[r]: an index of rank r's node (its host); rate_gbps <= 0: none known.
LineRateBound line_rate_bound(double rate_gbps, int directions, int pairs,
                              const std::vector<int>& node_of_rank);

// The timing loop of every point-to-point benchmark (pt2pt/runner.cpp).
std::unique_ptr<Runner> make_pt2pt_runner(const RunContext& rc);

}  // namespace cb
