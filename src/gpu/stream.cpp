#include "gpu/stream.hpp"

#include <utility>

#include "gpu/cuda_check.hpp"

namespace cb::gpu {
namespace {

cudaStream_t as_stream(StreamHandle s) {
  return static_cast<cudaStream_t>(s);
}

cudaEvent_t as_event(void* e) {
  return static_cast<cudaEvent_t>(e);
}

// cudaStreamQuery / cudaEventQuery: cudaErrorNotReady is the only "not yet".
bool ready(cudaError_t e, const char* what) {
  if (e == cudaErrorNotReady) return false;
  cuda_check(e, what);
  return true;
}

}  // namespace

Stream::Stream() {
  cudaStream_t s = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  stream_ = s;
}

Stream::~Stream() {
  if (stream_) cudaStreamDestroy(as_stream(stream_));  // no throw from a destructor
}

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (stream_) cudaStreamDestroy(as_stream(stream_));
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

bool Stream::query() const {
  return ready(cudaStreamQuery(as_stream(stream_)), "cudaStreamQuery");
}

void Stream::synchronize() const {
  cuda_check(cudaStreamSynchronize(as_stream(stream_)), "cudaStreamSynchronize");
}

Event::Event(bool timing) {
  cudaEvent_t e = nullptr;
  cuda_check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming),
             "cudaEventCreateWithFlags");
  event_ = e;
}

Event::~Event() {
  if (event_) cudaEventDestroy(as_event(event_));
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_) cudaEventDestroy(as_event(event_));
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(StreamHandle stream) {
  cuda_check(cudaEventRecord(as_event(event_), as_stream(stream)), "cudaEventRecord");
}

bool Event::query() const {
  return ready(cudaEventQuery(as_event(event_)), "cudaEventQuery");
}

void Event::synchronize() const {
  cuda_check(cudaEventSynchronize(as_event(event_)), "cudaEventSynchronize");
}

void Event::wait_on(StreamHandle stream) const {
  cuda_check(cudaStreamWaitEvent(as_stream(stream), as_event(event_), 0), "cudaStreamWaitEvent");
}

double Event::elapsed_s(const Event& start, const Event& stop) {
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, as_event(start.event_), as_event(stop.event_)),
             "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1e-3;
}

}  // namespace cb::gpu
