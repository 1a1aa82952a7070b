#pragma once

// Error values shared by the probe and the GPU detectors. CUDA and
// nvidia-smi failures come back as data so the caller picks the exit status.

#include <string>
#include <utility>
#include <variant>

namespace vramsim::gpu {

enum class ErrorKind {
  InvalidArgument,    // bad option values
  NoDevice,           // no usable CUDA device (or no driver, or no CUDA build)
  CorrectnessFailed,  // small-N GEMM disagreed with the CPU reference
  OutOfMemory,        // the device (or cuBLASLt) could not allocate what N needs
  CudaFailure,        // any other CUDA / cuBLAS runtime error
  DetectionFailed,    // detection ran but its output could not be used
};

struct Error {
  ErrorKind kind = ErrorKind::CudaFailure;
  std::string message;
};

// The line every "no device" path prints; callers and tests match on it.
inline constexpr const char* kNoDevicePrefix = "no CUDA device visible: ";
// The line when the device may be there but a CUDA library the probe needs
// (cuBLASLt) cannot be loaded; same ErrorKind (NoDevice) and exit status.
inline constexpr const char* kNoUsableCudaPrefix = "no usable CUDA: ";

inline Error no_device_error(const std::string& reason) {
  return Error{ErrorKind::NoDevice, std::string(kNoDevicePrefix) + reason};
}

// Process exit statuses of vramsim-probe (documented in docs/probe.md).
enum class ExitCode : int {
  Ok = 0,
  BadArguments = 2,
  NoDevice = 3,
  CorrectnessFailed = 4,
  RuntimeFailure = 5,
  OutOfMemory = 6,
};

constexpr ExitCode exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument: return ExitCode::BadArguments;
    case ErrorKind::NoDevice: return ExitCode::NoDevice;
    case ErrorKind::CorrectnessFailed: return ExitCode::CorrectnessFailed;
    case ErrorKind::OutOfMemory: return ExitCode::OutOfMemory;
    case ErrorKind::CudaFailure: return ExitCode::RuntimeFailure;
    case ErrorKind::DetectionFailed: return ExitCode::RuntimeFailure;
  }
  return ExitCode::RuntimeFailure;
}

// Minimal stand-in for std::expected (C++23) holding a value or an Error.
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace vramsim::gpu
