#include "pt2pt/patterns.hpp"

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

void exchange_window(Pt2ptContext& c) {
  c.be.batch(c.exchange);
}

}  // namespace cb
