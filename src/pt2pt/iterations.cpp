#include "pt2pt/iterations.hpp"

#include "backends/control.hpp"
#include "core/mpi_check.hpp"

namespace cb {

void ping_pong(Pt2ptContext& c) {
  if (c.role == Role::Sender) {
    c.be.send(c.send, c.peer, kDataTag);
    c.be.recv(c.recv, c.peer, kDataTag);
  } else {
    c.be.recv(c.recv, c.peer, kDataTag);
    c.be.send(c.send, c.peer, kDataTag);
  }
}

void window_with_ack(Pt2ptContext& c) {
  if (c.role == Role::Sender) {
    c.be.batch(c.sends);
    c.be.recv(c.ack, c.peer, kAckTag);
  } else {
    c.be.batch(c.recvs);
    c.be.send(c.ack, c.peer, kAckTag);
  }
}

void fan_window(Pt2ptContext& c) {
  c.be.batch(c.role == Role::Sender ? c.sends : c.recvs);
  // One blocking ack after another, as OMB; send() and recv() also stage a host byte where
  // the backend (nccl) moves device memory only.
  for (const P2POp& a : c.acks) {
    if (a.kind == P2POp::Kind::Send)
      c.be.send(a.buf, a.peer, a.tag);
    else
      c.be.recv(a.buf, a.peer, a.tag);
  }
}

void exchange_window(Pt2ptContext& c) {
  c.be.batch(c.exchange);
}

namespace {
void start_wait(Pt2ptContext& c, MPI_Request& req) {
  CB_MPI(MPI_Start(&req));
  wait_request(req, c.wait);
}
void start_wait_all(Pt2ptContext& c, std::vector<MPI_Request>& reqs) {
  CB_MPI(MPI_Startall(static_cast<int>(reqs.size()), reqs.data()));
  wait_all(reqs, c.wait);
}
}  // namespace

void persistent_ping_pong(Pt2ptContext& c) {
  if (c.role == Role::Sender) {
    start_wait(c, c.p_sends[0]);
    start_wait(c, c.p_recvs[0]);
  } else {
    start_wait(c, c.p_recvs[0]);
    start_wait(c, c.p_sends[0]);
  }
}

void persistent_window_with_ack(Pt2ptContext& c) {
  start_wait_all(c, c.role == Role::Sender ? c.p_sends : c.p_recvs);
  start_wait(c, c.p_ack);
}

void partitioned_ping_pong(Pt2ptContext& c) {
  const auto send = [&c] {
    MPI_Request& req = c.p_sends[0];
    CB_MPI(MPI_Start(&req));
    for (int p = 0; p < c.partitions; ++p) CB_MPI(MPI_Pready(p, req));
    wait_request(req, c.wait);
  };
  if (c.role == Role::Sender) {
    send();
    start_wait(c, c.p_recvs[0]);
  } else {
    start_wait(c, c.p_recvs[0]);
    send();
  }
}

void persistent_exchange_window(Pt2ptContext& c) {
  start_wait_all(c, c.p_exchange);
}

}  // namespace cb
