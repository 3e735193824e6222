// CUDA streams and events as RAII objects behind a plain C++ header: the handle is an
// opaque pointer (a cudaStream_t / cudaEvent_t), so code compiled without the CUDA
// headers (the harness, the engine) can hold and pass them. In a build without CUDA the
// constructors throw UsageError with gpu::unavailable_reason().
#pragma once

namespace cb::gpu {

// A cudaStream_t. nullptr is CUDA's legacy default stream.
using StreamHandle = void*;

class Stream {
 public:
  // A stream on the current device that does not synchronise with the legacy default
  // stream (cudaStreamNonBlocking), so that other libraries' work never serialises ours.
  Stream();
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  StreamHandle handle() const { return stream_; }
  bool query() const;  // true once all enqueued work has completed; throws on a CUDA error
  void synchronize() const;

 private:
  StreamHandle stream_ = nullptr;
};

class Event {
 public:
  // Without timing, recording and querying are cheapest (cudaEventDisableTiming).
  explicit Event(bool timing = false);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void* handle() const { return event_; }
  void record(StreamHandle stream);
  bool query() const;  // true once the work recorded before it has completed
  void synchronize() const;
  // Makes `stream` wait (on the device) for the work recorded before this event.
  void wait_on(StreamHandle stream) const;

  // Device time between two recorded timing events, in seconds (0.5 us resolution).
  static double elapsed_s(const Event& start, const Event& stop);

 private:
  void* event_ = nullptr;
};

}  // namespace cb::gpu
