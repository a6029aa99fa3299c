// latency_driver: the plain CUDA *driver API* reference for pinscope's latency modes.
//
// pinscope calls the driver API (through cudarc), so this probe makes the same calls in the same
// order, with the same stream, event and context flags and pinscope's own PTX kernels: what it
// measures is the driver and the machine, what pinscope adds on top is the difference. (The
// runtime-API probe, latency_probe.cu, shows what a cudaMemcpyAsync program sees: the runtime
// adds its own cost per call.)
//
//   nvcc -O2 -o latency_driver scripts/probes/latency_driver.cu -lcuda
//   ./latency_driver harness/kernels/pinscope.ptx [samples] [key-prefix]
//   (a key prefix, e.g. copy/pageable/, runs only the measurements whose keys start with it;
//   a key followed by $, e.g. copy/pageable/d2h/4/async$, runs that one alone)
//   LATENCY_NVML=1 ./latency_driver ...   initialises NVML first (nvmlInit_v2, a device handle),
//   as pinscope does for its observers, to tell whether NVML in the process moves the numbers.
//   LATENCY_PRELOAD=free|keep|own ./latency_driver ...   first makes the sampling load of
//   pinscope's settings record (64 MiB page-locked and device buffers, 32 host-to-device copies),
//   then frees the page-locked buffer (`free`) or keeps it to the end (`keep`); `own` makes it
//   in a context of its own (cuCtxCreate), destroyed after.
//   LATENCY_D2H_OTHER=1 ./latency_driver ...   first makes one 4-byte device-to-host copy into a
//   pageable page of its own, kept to the end: no measured buffer is then the process's first
//   pageable copy destination.
//   LATENCY_ORDER=pinscope ./latency_driver ...   the measurements in the order of pinscope's
//   scenarios/latency.toml (per host kind: H2D 4 B, 64 KiB, D2H 4 B, 64 KiB; async copies, then
//   synchronous calls and enqueue costs of pinned and pageable memory, then waits and launches),
//   each async copy's samples followed by one event-bracketed copy per sample as pinscope takes
//   its device view: the reference in the same history as a `pinscope run` of that scenario.
//   LATENCY_FIRST=<key prefix> ./latency_driver ...   first makes the copies whose keys start with
//   it (`key$`: that one), reported as key=first:<key>, then the ones asked for: whether a copy
//   made earlier in the process moves a later one.
//
// One line per measurement, host clock (std::chrono::steady_clock), µs, with a key that
// scripts/latency-compare.py joins to pinscope's rows:
//   key=<key>  min <x>  p50 <x>  p90 <x>  p99 <x> us  n=<n>  data=<ok|WRONG|n/a>
// Keys: copy/<pinned|registered|mapped|pageable|pageable-malloc>/<h2d|d2h>/<bytes>/<async|async-evt|async-settle|sync|enqueue>,
// sync/<stream|spin|yield|blocking|event-blocking|query>, launch-call, launch-rate.
#include <cuda.h>
#include <dlfcn.h>
#include <sched.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { const char *n_ = nullptr; \
  cuGetErrorName(e_, &n_); std::fprintf(stderr, "%s failed: %s (line %d)\n", #x, n_ ? n_ : "?", \
  __LINE__); std::exit(1); } } while (0)

// pinscope creates its contexts with cuCtxCreate_v2 (through cudarc); CUDA 13's header maps
// cuCtxCreate to the _v4 form, so the _v2 entry point the driver still exports is named here.
extern "C" CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);

using Clock = std::chrono::steady_clock;
static double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

static int g_samples = 1000;
static std::string g_only;  // run only the keys that start with this (empty: all; `key$`: that key)
static bool wanted(const std::string &key) {
  if (!g_only.empty() && g_only.back() == '$') return key == g_only.substr(0, g_only.size() - 1);
  return key.compare(0, g_only.size(), g_only) == 0;
}
// Whether a group of keys starting with `prefix` may hold a wanted one.
static bool wanted_group(const std::string &prefix) {
  return wanted(prefix) || g_only.compare(0, prefix.size(), prefix) == 0;
}
static CUdevice g_dev;
static CUmodule g_module;
static CUfunction g_empty, g_spin;

// The CPUs the measuring thread ran on when its samples began and ended (`cpu=a->b` after the
// data field): this VM's small-copy latency may depend on where the thread runs.
static int g_cpu_first = -1;
static const void *g_host = nullptr;  // the copy's host buffer (printed as host=…), or none
static std::string g_tag;  // prepended to every key reported (LATENCY_FIRST's pass: "first:")
static bool g_view_after = false;  // LATENCY_ORDER=pinscope: async samples then their device view
static void report(const std::string &key, std::vector<double> v, const char *data) {
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {
    double h = (v.size() - 1) * p;
    size_t lo = (size_t)h, hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (h - lo) * (v[hi] - v[lo]);
  };
  std::printf("key=%-34s min %8.2f  p50 %8.2f  p90 %8.2f  p99 %8.2f us  n=%zu  data=%s  cpu=%d->%d",
              (g_tag + key).c_str(), v[0], q(0.5), q(0.9), q(0.99), v.size(), data, g_cpu_first, sched_getcpu());
  if (g_host) std::printf("  host=%p", g_host);
  std::printf("\n");
  g_host = nullptr;
}

static int warmup() { return std::max(100, g_samples / 10); }

static void load_kernels(const char *ptx_path) {
  std::ifstream f(ptx_path);
  if (!f) { std::fprintf(stderr, "cannot read %s\n", ptx_path); std::exit(2); }
  std::stringstream ss;
  ss << f.rdbuf();
  std::string ptx = ss.str();
  CK(cuModuleLoadData(&g_module, ptx.c_str()));
  CK(cuModuleGetFunction(&g_empty, g_module, "pinscope_empty"));
  CK(cuModuleGetFunction(&g_spin, g_module, "pinscope_spin"));
}

static void launch_empty(CUstream s) { CK(cuLaunchKernel(g_empty, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr)); }

// pinscope's spin gate: a one-thread kernel that holds the stream until word 0 of a mapped
// page-locked page becomes non-zero (or 20 s pass; word 1 then says it timed out).
struct Gate {
  volatile unsigned *word = nullptr;
  CUdeviceptr dev = 0;
  Gate() {
    void *p = nullptr;
    CK(cuMemHostAlloc(&p, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    word = (volatile unsigned *)p;
    CK(cuMemHostGetDevicePointer(&dev, p, 0));
  }
  void hold(CUstream s) {
    word[0] = 0;
    word[1] = 0;
    unsigned long long flag = dev, timeout = 20000000000ULL, status = dev + 4;
    void *args[] = {&flag, &timeout, &status};
    CK(cuLaunchKernel(g_spin, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  }
  void release() { word[0] = 1; }
  bool timed_out() const { return word[1] != 0; }
  ~Gate() { cuMemFreeHost((void *)word); }
};

// Pageable and registered buffers are page-aligned, as pinscope allocates them;
// `pageable-malloc` is plain malloc (16-byte aligned), to show what the alignment changes.
enum class Kind { Pinned, Registered, Mapped, Pageable, PageableMalloc };
// `async-evt` is `async` in pinscope's sample shape: the host-timed copy and wait, then an
// identical copy bracketed by a timing event pair and waited for (the device's view), so each
// timed copy follows an event-bracketed one. Kept apart from `async` to show what that shape costs.
// `async-settle` is pinscope's shape since: a plain copy and wait after the event-bracketed one, so
// the next timed copy follows a plain copy again.
// `async-elapsed` is `async-settle` with the event pair read (cuEventElapsedTime) before the plain
// copy, as pinscope reads it: every driver call of pinscope's sample, in its order.
enum class Call { Async, Sync, Enqueue, AsyncEvt, AsyncSettle, AsyncElapsed };
static const char *kind_name(Kind k) {
  switch (k) {
    case Kind::Pinned: return "pinned";
    case Kind::Registered: return "registered";
    case Kind::Mapped: return "mapped";
    case Kind::PageableMalloc: return "pageable-malloc";
    default: return "pageable";
  }
}
static const char *call_name(Call c) {
  switch (c) {
    case Call::Async: return "async";
    case Call::Sync: return "sync";
    case Call::AsyncEvt: return "async-evt";
    case Call::AsyncSettle: return "async-settle";
    case Call::AsyncElapsed: return "async-elapsed";
    default: return "enqueue";
  }
}

struct Host {
  Kind kind;
  unsigned char *p = nullptr;
  size_t bytes;
  Host(Kind k, size_t n) : kind(k), bytes(n) {
    if (k == Kind::Pinned || k == Kind::Mapped) {
      void *v = nullptr;
      CK(cuMemHostAlloc(&v, n, k == Kind::Mapped ? CU_MEMHOSTALLOC_DEVICEMAP : 0));
      p = (unsigned char *)v;
    } else if (k == Kind::PageableMalloc) {
      p = (unsigned char *)std::malloc(n);
    } else {
      p = (unsigned char *)std::aligned_alloc(4096, (n + 4095) / 4096 * 4096);
      if (k == Kind::Registered) CK(cuMemHostRegister(p, n, 0));
    }
  }
  ~Host() {
    if (kind == Kind::Pinned || kind == Kind::Mapped) cuMemFreeHost(p);
    else {
      if (kind == Kind::Registered) cuMemHostUnregister(p);
      std::free(p);
    }
  }
};

static void copy_case(Gate &gate, Kind kind, bool h2d, size_t bytes, Call call) {
  char key[96];
  std::snprintf(key, sizeof key, "copy/%s/%s/%zu/%s", kind_name(kind), h2d ? "h2d" : "d2h", bytes,
                call_name(call));
  if (!wanted(key)) return;
  Host host(kind, bytes);
  CUdeviceptr dev = 0;
  CK(cuMemAlloc(&dev, bytes));
  for (size_t i = 0; i < bytes; ++i) host.p[i] = (unsigned char)(i * 7 + 3);
  if (!h2d) { CK(cuMemcpyHtoD(dev, host.p, bytes)); std::memset(host.p, 0, bytes); }
  CUstream s;
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  auto async_copy = [&] {
    if (h2d) CK(cuMemcpyHtoDAsync(dev, host.p, bytes, s));
    else CK(cuMemcpyDtoHAsync(host.p, dev, bytes, s));
  };
  CUevent ev0, ev1;
  CK(cuEventCreate(&ev0, CU_EVENT_DEFAULT));
  CK(cuEventCreate(&ev1, CU_EVENT_DEFAULT));
  bool gated = call == Call::Enqueue && (kind == Kind::Pinned || kind == Kind::Registered || kind == Kind::Mapped);
  std::vector<double> v;
  for (int i = 0; i < warmup() + g_samples; ++i) {
    if (i == warmup()) g_cpu_first = sched_getcpu();
    double t = 0;
    if (call == Call::Async || call == Call::AsyncEvt || call == Call::AsyncSettle ||
        call == Call::AsyncElapsed) {
      auto t0 = Clock::now();
      async_copy();
      CK(cuStreamSynchronize(s));
      t = us_since(t0);
      if (call != Call::Async) {
        CK(cuEventRecord(ev0, s));
        async_copy();
        CK(cuEventRecord(ev1, s));
        CK(cuStreamSynchronize(s));
      }
      if (call == Call::AsyncElapsed) {
        float ms = 0;
        CK(cuEventElapsedTime(&ms, ev0, ev1));
      }
      if (call == Call::AsyncSettle || call == Call::AsyncElapsed) {
        async_copy();
        CK(cuStreamSynchronize(s));
      }
    } else if (call == Call::Sync) {
      auto t0 = Clock::now();
      if (h2d) CK(cuMemcpyHtoD(dev, host.p, bytes));
      else CK(cuMemcpyDtoH(host.p, dev, bytes));
      t = us_since(t0);
    } else {
      if (gated) gate.hold(s);
      auto t0 = Clock::now();
      async_copy();
      t = us_since(t0);
      if (gated) gate.release();
      CK(cuStreamSynchronize(s));
      if (gated && gate.timed_out()) { std::fprintf(stderr, "spin gate timed out\n"); std::exit(1); }
    }
    if (i >= warmup()) v.push_back(t);
  }
  if (g_view_after && call == Call::Async) {
    for (int i = 0; i < g_samples; ++i) {
      CK(cuEventRecord(ev0, s));
      async_copy();
      CK(cuEventRecord(ev1, s));
      CK(cuStreamSynchronize(s));
    }
  }
  std::vector<unsigned char> back(bytes);
  if (h2d) CK(cuMemcpyDtoH(back.data(), dev, bytes));
  else std::memcpy(back.data(), host.p, bytes);
  size_t bad = 0;
  for (size_t i = 0; i < bytes; ++i) bad += back[i] != (unsigned char)(i * 7 + 3);
  g_host = host.p;
  report(key, v, bad ? "WRONG" : "ok");
  CK(cuEventDestroy(ev0));
  CK(cuEventDestroy(ev1));
  CK(cuStreamDestroy(s));
  CK(cuMemFree(dev));
}

// Empty kernel + a wait, host clock around both. `wait`: stream synchronisation, an event
// (blocking-sync, no timing) recorded then synchronised, or polling cuStreamQuery.
enum class WaitHow { Stream, Event, Query };
static std::vector<double> empty_waits(WaitHow how) {
  CUstream s;
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUevent ev;
  CK(cuEventCreate(&ev, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING));
  std::vector<double> v;
  for (int i = 0; i < warmup() + g_samples; ++i) {
    if (i == warmup()) g_cpu_first = sched_getcpu();
    auto t0 = Clock::now();
    launch_empty(s);
    if (how == WaitHow::Stream) CK(cuStreamSynchronize(s));
    else if (how == WaitHow::Event) { CK(cuEventRecord(ev, s)); CK(cuEventSynchronize(ev)); }
    else {
      CUresult q;
      while ((q = cuStreamQuery(s)) == CUDA_ERROR_NOT_READY) {}
      CK(q);
    }
    double t = us_since(t0);
    if (i >= warmup()) v.push_back(t);
  }
  CK(cuEventDestroy(ev));
  CK(cuStreamDestroy(s));
  return v;
}

// The sync modes that need a context of their own, made with that scheduling flag.
static void own_context_sync(const char *name, unsigned sched) {
  CUcontext primary, own;
  CK(cuCtxGetCurrent(&primary));
  CK(cuCtxCreate_v2(&own, sched | CU_CTX_MAP_HOST, g_dev));
  CUmodule m;
  CUfunction saved = g_empty;
  {
    std::ifstream f(getenv("PTX_PATH"));
    std::stringstream ss;
    ss << f.rdbuf();
    std::string ptx = ss.str();
    CK(cuModuleLoadData(&m, ptx.c_str()));
    CK(cuModuleGetFunction(&g_empty, m, "pinscope_empty"));
  }
  report(std::string("sync/") + name, empty_waits(WaitHow::Stream), "n/a");
  g_empty = saved;
  CK(cuModuleUnload(m));
  CK(cuCtxDestroy(own));
  CK(cuCtxSetCurrent(primary));
}

static void launch_cases(Gate &gate) {
  CUstream s;
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  std::vector<double> call, rate;
  for (int i = 0; i < warmup() + g_samples; ++i) {
    if (i == warmup()) g_cpu_first = sched_getcpu();
    gate.hold(s);
    auto t0 = Clock::now();
    launch_empty(s);
    double t = us_since(t0);
    gate.release();
    CK(cuStreamSynchronize(s));
    if (i >= warmup()) call.push_back(t);
  }
  report("launch-call", call, "n/a");
  const int batch = 1000;
  for (int i = 0; i < 12; ++i) {
    auto t0 = Clock::now();
    for (int k = 0; k < batch; ++k) launch_empty(s);
    CK(cuStreamSynchronize(s));
    if (i >= 2) rate.push_back(us_since(t0) / batch);
  }
  report("launch-rate", rate, "n/a");
  CK(cuStreamDestroy(s));
}

// pinscope's settings record's sampling load (see LATENCY_PRELOAD above).
static void preload(bool keep) {
  const size_t n = 64u << 20;
  void *h = nullptr;
  CUdeviceptr d = 0;
  CUstream s;
  CK(cuMemHostAlloc(&h, n, 0));
  CK(cuMemAlloc(&d, n));
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (int i = 0; i < 32; ++i) CK(cuMemcpyHtoDAsync(d, h, n, s));
  CK(cuStreamSynchronize(s));
  CK(cuStreamDestroy(s));
  CK(cuMemFree(d));
  if (!keep) CK(cuMemFreeHost(h));
  std::printf("latency_driver: preload of 32 x 64 MiB copies made, page-locked buffer %s\n", keep ? "kept" : "freed");
}

// Every copy measurement whose key is wanted: all 4-byte ones, then all 64 KiB ones.
static void copy_cases(Gate &gate) {
  for (size_t bytes : {(size_t)4, (size_t)65536})
    for (Kind k : {Kind::Pinned, Kind::Registered, Kind::Mapped, Kind::Pageable, Kind::PageableMalloc})
      for (bool h2d : {true, false})
        for (Call c : {Call::Async, Call::AsyncEvt, Call::AsyncSettle, Call::AsyncElapsed, Call::Sync,
                       Call::Enqueue})
          copy_case(gate, k, h2d, bytes, c);
}

// The order of pinscope's scenarios/latency.toml (its cases, each sweep direction-major).
static void pinscope_order(Gate &gate) {
  for (Kind k : {Kind::Pinned, Kind::Registered, Kind::Mapped, Kind::Pageable})
    for (bool h2d : {true, false})
      for (size_t bytes : {(size_t)4, (size_t)65536}) copy_case(gate, k, h2d, bytes, Call::Async);
  for (Call c : {Call::Sync, Call::Enqueue})
    for (Kind k : {Kind::Pinned, Kind::Pageable})
      for (bool h2d : {true, false})
        for (size_t bytes : {(size_t)4, (size_t)65536}) copy_case(gate, k, h2d, bytes, c);
}

int main(int argc, char **argv) {
  if (argc < 2) { std::fprintf(stderr, "usage: latency_driver PTX [samples]\n"); return 2; }
  setenv("PTX_PATH", argv[1], 1);
  if (argc > 2) g_samples = std::max(10, std::atoi(argv[2]));
  if (argc > 3) g_only = argv[3];
  if (const char *n = std::getenv("LATENCY_NVML"); n && *n == '1') {
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    auto init = lib ? (int (*)())dlsym(lib, "nvmlInit_v2") : nullptr;
    auto handle = lib ? (int (*)(unsigned, void **))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2") : nullptr;
    void *dev = nullptr;
    int r = init ? init() : -1;
    int h = (r == 0 && handle) ? handle(0, &dev) : -1;
    std::printf("latency_driver: NVML initialised first (nvmlInit_v2 %d, device handle %d)\n", r, h);
  }
  CK(cuInit(0));
  CK(cuDeviceGet(&g_dev, 0));
  CUcontext primary;
  CK(cuDevicePrimaryCtxRetain(&primary, g_dev));
  CK(cuCtxSetCurrent(primary));
  char name[256];
  CK(cuDeviceGetName(name, sizeof name, g_dev));
  int drv = 0;
  CK(cuDriverGetVersion(&drv));
  std::printf("latency_driver: %s, driver API %d, primary context, %d samples after %d warm-up\n",
              name, drv, g_samples, warmup());
  load_kernels(argv[1]);
  Gate gate;
  if (const char *pre = std::getenv("LATENCY_PRELOAD"); pre && *pre) {
    CUcontext own = nullptr;
    if (std::strcmp(pre, "own") == 0) CK(cuCtxCreate_v2(&own, CU_CTX_SCHED_SPIN | CU_CTX_MAP_HOST, g_dev));
    preload(std::strcmp(pre, "keep") == 0);
    if (own) { CK(cuCtxDestroy(own)); CK(cuCtxSetCurrent(primary)); }
  }
  if (const char *o = std::getenv("LATENCY_D2H_OTHER"); o && *o == '1') {
    static unsigned char *other = (unsigned char *)std::aligned_alloc(4096, 4096);
    CUdeviceptr d = 0;
    CK(cuMemAlloc(&d, 4));
    CK(cuMemcpyDtoH(other, d, 4));
    CK(cuMemFree(d));
    std::printf("latency_driver: one 4-byte pageable D2H copy made first, into %p (kept)\n", (void *)other);
  }
  if (const char *first = std::getenv("LATENCY_FIRST"); first && *first) {
    std::string asked = g_only;
    g_only = first;
    g_tag = "first:";
    copy_cases(gate);
    g_only = asked;
    g_tag.clear();
  }
  const char *order = std::getenv("LATENCY_ORDER");
  g_view_after = order && std::strcmp(order, "pinscope") == 0;
  if (g_view_after) pinscope_order(gate);
  if (wanted_group("sync/")) {
    report("sync/stream", empty_waits(WaitHow::Stream), "n/a");
    own_context_sync("spin", CU_CTX_SCHED_SPIN);
    own_context_sync("yield", CU_CTX_SCHED_YIELD);
    own_context_sync("blocking", CU_CTX_SCHED_BLOCKING_SYNC);
    report("sync/event-blocking", empty_waits(WaitHow::Event), "n/a");
    report("sync/query", empty_waits(WaitHow::Query), "n/a");
  }
  if (wanted_group("launch")) launch_cases(gate);
  if (!g_view_after) copy_cases(gate);
  return 0;
}
