// The ranks an algorithm runs among. Algorithms number their peers 0 .. size-1 within the
// group; while a schedule is built for a group it maps those numbers to communicator
// ranks. So the same ring or tree runs on all ranks, or among node leaders only.
#pragma once

#include <vector>

namespace cb::engine {

class Comm;
class NodeShm;

class Group {
 public:
  // The whole communicator; `shm` when every rank is on this node.
  Group(int rank, int size, const Comm* comm = nullptr, NodeShm* shm = nullptr)
      : rank_(rank), size_(size), comm_(comm), shm_(shm) {}
  // `members[i]` is the communicator rank of group rank i.
  Group(int rank, std::vector<int> members, NodeShm* shm = nullptr)
      : rank_(rank),
        size_(static_cast<int>(members.size())),
        members_(std::move(members)),
        shm_(shm) {}

  int rank() const { return rank_; }
  int size() const { return size_; }
  int global(int r) const { return members_.empty() ? r : members_[static_cast<size_t>(r)]; }
  // The node's shared memory when every member is on this node (else null).
  NodeShm* shm() const { return shm_; }
  // The communicator's topology (nodes, leaders) for the whole-communicator group.
  const Comm* comm() const { return comm_; }

 private:
  int rank_, size_;
  std::vector<int> members_;  // empty: the identity
  const Comm* comm_ = nullptr;
  NodeShm* shm_ = nullptr;
};

}  // namespace cb::engine
