// What the blocking and the non-blocking collective runners share: which sizes run,
// buffers, the arguments of one call, and validation after timing.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/coll_spec.hpp"
#include "core/topology.hpp"
#include "core/vcounts.hpp"
#include "harness/placement.hpp"
#include "harness/runner.hpp"
#include "harness/stats.hpp"

namespace cb {

class CollectiveRunnerBase : public Runner {
 public:
  explicit CollectiveRunnerBase(const RunContext& rc);
  ~CollectiveRunnerBase() override;

  void prepare() override;
  std::vector<std::string> header_lines() const override;
  std::vector<Point> points() const override { return points_; }
  void annotate(nlohmann::json& doc) override;  // --memory: the document's "memory"
  bool show_size() const override { return spec_.sized; }
  bool places_buffers() const override { return true; }

 protected:
  size_t count_of(size_t bytes) const { return bytes / dtype_size(rc_.opt.dtype); }
  // Arguments of one call; -k rotate moves the root with the iteration.
  CollArgs args_for(const Point& point, int iteration) const;
  // The root of an iteration's call alone (what changes from one call to the next).
  int root_for(int iteration) const;
  // --off-cache and -u: points a's send and receive buffers at iteration `iteration`'s slot
  // of the rings (one slot without --off-cache), misaligned by -u. args_for() does it too.
  void place(CollArgs& a, uint64_t iteration) const;
  bool ring() const { return rc_.opt.off_cache; }
  // --vary-data: stores generation `generation`'s values (values::varied_index(): one element
  // per 64-byte line) into the buffer a's call reads from (the send buffer, in place the
  // receive buffer). Untimed: the loops call it between iterations, before the barrier.
  void stamp_data(const CollArgs& a, uint32_t generation);
  // Fresh exact inputs, one untimed operation (blocking or start + wait; -G: in a graph),
  // every element checked; wrong elements summed over ranks into out.wrong. Rotating roots
  // are each checked. Where every rank must have the same result (same_on_all_ranks), its
  // bits are compared across ranks too, and for a floating-point sum or prod one more
  // untimed operation with order-sensitive inputs is compared across ranks only
  // (out.agreement).
  void validate(const Point& point, bool nonblocking, SizeOutcome& out);
  // One untimed operation, completed (with -G: captured into a graph of one call, launched).
  void run_once(const CollArgs& a, bool nonblocking);
  // One blocking call of `a`: run(), or for a persistent benchmark (osu_<coll>_persistent)
  // start and wait of the operation init_persistent() made for its root.
  void call(const CollArgs& a);
  // Persistent benchmarks: makes the operations of `point` (collectively, untimed: every
  // rank makes the same ones in the same order), one per root its iterations use, and
  // returns this rank's mean time of one init, us; 0 for the other benchmarks.
  double init_persistent(const Point& point);
  // Elements whose bandwidth algbw reports for `a` (nccl-tests' convention; neighborhood
  // collectives: what the average rank receives).
  double algbw_elements(const CollArgs& a) const;
  // bytes, count, dtype, op, root, in_place, algo, iterations, warmup.
  nlohmann::json base_record(const Point& point, int iterations, int warmup) const;
  // The text column naming the backend's algorithm, if it has one for these arguments.
  void add_algorithm_cell(const CollArgs& args, std::vector<Cell>& cells) const;

  const RunContext& rc_;
  const CollSpec& spec_;

 private:
  // Barrier: one point per algorithm, size 0, no buffers.
  void prepare_sizeless();
  // The forced algorithm, every one of the backend (--algo all), or "" (its choice).
  std::vector<std::string> algorithms_to_run() const;
  // Elements of the send or recv buffer at `count` (alltoallv: from its count matrix).
  size_t elements(size_t count, bool send) const;
  // How the backend reduces --dtype with --op, where it says (MPI: its MPI_Op).
  std::string reduction_note() const;
  // The header line that says what -c checks.
  std::string validation_line() const;
  // --memory 1 (nccl-tests' -M): the buffers' bytes, the process's peak resident memory and,
  // with a GPU, the device memory in use, the largest over the ranks, after allocation;
  // into memory_ and a header line.
  void report_memory(size_t device_free_before);
  // Whether -c runs the order-sensitive pass (allreduce of a floating-point sum or prod).
  bool order_pass() const;
  // The ranks whose result bits (`bits`, this rank's) differ from rank 0's: a hash per rank
  // gathered on the control communicator. Collective.
  std::vector<int> ranks_differing(const std::vector<std::byte>& bits) const;

  std::vector<Point> points_;
  std::vector<std::string> notes_;
  Buf send_, recv_;
  std::map<size_t, std::unique_ptr<CountMatrix>> counts_;      // alltoallv: per count (--counts)
  std::map<int, std::unique_ptr<PersistentColl>> persistent_;  // by root, of the current size
  std::unique_ptr<Topology> topology_;                         // neighborhood collectives: -N's
  OffCacheTarget off_cache_;            // --off-cache: what each ring covers and why
  std::vector<std::byte> stamp_image_;  // --vary-data on device buffers: the host image copied in
  nlohmann::json memory_;  // --memory 1: what the buffers and the process hold (annotate())
};

}  // namespace cb
