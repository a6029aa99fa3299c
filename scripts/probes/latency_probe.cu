// latency_probe: the plain CUDA runtime reference for pinscope's latency modes.
//
// Build and run on a machine with the CUDA toolkit (`scripts/publish.sh reference` does both):
//   nvcc -O2 -o latency_probe scripts/probes/latency_probe.cu
//   ./latency_probe [spin|yield|blocking] [samples]
//
// Prints one line per measurement, host clock (std::chrono::steady_clock), µs:
//   copy  <host> <dir> <bytes>  async+sync | sync-call | enqueue   min p50 p90 p99
//   sync  <mode> empty-kernel + cudaStreamSynchronize / event blocking sync / stream-query poll
//   launch  empty kernel + sync (latency), and launches per second (back to back, then one sync)
// The device flag (spin / yield / blocking-sync) is set before the context is created, so the
// script runs the probe once per flag. Each copy's data is checked after its samples.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s failed: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
  std::exit(1); } } while (0)

using Clock = std::chrono::steady_clock;
static double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

__global__ void empty_kernel() {}

// Holds the stream until *flag becomes non-zero (or about 10 s pass), like pinscope's spin gate.
__global__ void spin_kernel(volatile unsigned *flag) {
  long long start = clock64();
  while (*flag == 0) {
    if (clock64() - start > 20000000000LL) break;
  }
}

static int g_samples = 1000;

static void report(const char *what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {
    double h = (v.size() - 1) * p;
    size_t lo = (size_t)h, hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (h - lo) * (v[hi] - v[lo]);
  };
  std::printf("%-58s min %8.2f  p50 %8.2f  p90 %8.2f  p99 %8.2f us  (n=%zu)\n", what, v[0], q(0.5),
              q(0.9), q(0.99), v.size());
}

enum class Call { AsyncSync, SyncCall, Enqueue };

static void copy_case(bool pinned, bool h2d, size_t bytes, Call call, volatile unsigned *flag,
                      unsigned *flag_dev) {
  unsigned char *host = nullptr, *dev = nullptr;
  if (pinned) CK(cudaMallocHost(&host, bytes));
  else host = (unsigned char *)std::malloc(bytes);
  CK(cudaMalloc(&dev, bytes));
  for (size_t i = 0; i < bytes; ++i) host[i] = (unsigned char)(i * 7 + 3);
  if (!h2d) { CK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice)); std::memset(host, 0, bytes); }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *dst = h2d ? (void *)dev : (void *)host;
  const void *src = h2d ? (const void *)host : (const void *)dev;
  cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  std::vector<double> v;
  int warmup = std::max(100, g_samples / 10);
  for (int i = 0; i < warmup + g_samples; ++i) {
    double t = 0;
    if (call == Call::AsyncSync) {
      auto t0 = Clock::now();
      CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
      CK(cudaStreamSynchronize(s));
      t = us_since(t0);
    } else if (call == Call::SyncCall) {
      auto t0 = Clock::now();
      CK(cudaMemcpy(dst, src, bytes, kind));
      t = us_since(t0);
    } else {
      bool gate = pinned;
      if (gate) { *flag = 0; spin_kernel<<<1, 1, 0, s>>>(flag_dev); CK(cudaGetLastError()); }
      auto t0 = Clock::now();
      CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
      t = us_since(t0);
      if (gate) *flag = 1;
      CK(cudaStreamSynchronize(s));
    }
    if (i >= warmup) v.push_back(t);
  }
  // Check the data landed.
  std::vector<unsigned char> back(bytes);
  if (h2d) CK(cudaMemcpy(back.data(), dev, bytes, cudaMemcpyDeviceToHost));
  else std::memcpy(back.data(), host, bytes);
  size_t bad = 0;
  for (size_t i = 0; i < bytes; ++i) bad += back[i] != (unsigned char)(i * 7 + 3);
  const char *names[] = {"async+sync", "sync-call", "enqueue"};
  char what[128];
  std::snprintf(what, sizeof what, "copy  %-8s %s %7zu B  %-10s %s", pinned ? "pinned" : "pageable",
                h2d ? "h2d" : "d2h", bytes, names[(int)call], bad ? "DATA WRONG" : "ok");
  report(what, v);
  CK(cudaStreamDestroy(s));
  CK(cudaFree(dev));
  if (pinned) CK(cudaFreeHost(host)); else std::free(host);
}

static void sync_cases(const char *mode) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming));
  std::vector<double> a, b, c;
  int warmup = std::max(100, g_samples / 10);
  for (int i = 0; i < warmup + g_samples; ++i) {
    auto t0 = Clock::now();
    empty_kernel<<<1, 1, 0, s>>>();
    CK(cudaStreamSynchronize(s));
    double ta = us_since(t0);
    t0 = Clock::now();
    empty_kernel<<<1, 1, 0, s>>>();
    CK(cudaEventRecord(ev, s));
    CK(cudaEventSynchronize(ev));
    double tb = us_since(t0);
    t0 = Clock::now();
    empty_kernel<<<1, 1, 0, s>>>();
    cudaError_t q;
    while ((q = cudaStreamQuery(s)) == cudaErrorNotReady) {}
    CK(q);
    double tc = us_since(t0);
    if (i >= warmup) { a.push_back(ta); b.push_back(tb); c.push_back(tc); }
  }
  char what[128];
  std::snprintf(what, sizeof what, "sync  ctx=%-8s empty kernel + cudaStreamSynchronize", mode);
  report(what, a);
  std::snprintf(what, sizeof what, "sync  ctx=%-8s empty kernel + event blocking sync", mode);
  report(what, b);
  std::snprintf(what, sizeof what, "sync  ctx=%-8s empty kernel + cudaStreamQuery poll", mode);
  report(what, c);
  // Launch rate: back-to-back launches, one synchronisation at the end.
  const int n = 10000;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) empty_kernel<<<1, 1, 0, s>>>();
  double enq = us_since(t0);
  CK(cudaStreamSynchronize(s));
  double all = us_since(t0);
  std::printf("launch ctx=%-8s %d empty kernels: %.2f us per launch call, %.0f launches/s to completion\n",
              mode, n, enq / n, n / (all * 1e-6));
  CK(cudaEventDestroy(ev));
  CK(cudaStreamDestroy(s));
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "spin";
  if (argc > 2) g_samples = std::max(10, std::atoi(argv[2]));
  unsigned flags = cudaDeviceMapHost;
  if (!std::strcmp(mode, "spin")) flags |= cudaDeviceScheduleSpin;
  else if (!std::strcmp(mode, "yield")) flags |= cudaDeviceScheduleYield;
  else if (!std::strcmp(mode, "blocking")) flags |= cudaDeviceScheduleBlockingSync;
  else { std::fprintf(stderr, "mode must be spin, yield or blocking\n"); return 2; }
  CK(cudaSetDeviceFlags(flags));
  CK(cudaFree(0));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  std::printf("latency_probe: %s, runtime %d, driver %d, context flag %s, %d samples\n", p.name, rt,
              drv, mode, g_samples);
  sync_cases(mode);
  if (!std::strcmp(mode, "spin") || argc > 3) {
    unsigned *flag = nullptr, *flag_dev = nullptr;
    CK(cudaHostAlloc(&flag, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostGetDevicePointer((void **)&flag_dev, flag, 0));
    for (size_t bytes : {(size_t)4, (size_t)65536})
      for (bool pinned : {true, false})
        for (bool h2d : {true, false})
          for (Call c : {Call::AsyncSync, Call::SyncCall, Call::Enqueue})
            copy_case(pinned, h2d, bytes, c, flag, flag_dev);
    CK(cudaFreeHost(flag));
  }
  return 0;
}
