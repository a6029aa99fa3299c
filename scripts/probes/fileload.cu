// The C++ file-load reference beside pinscope's model-load (scripts/publish.sh models): a file on
// disk into GPU memory the ways loaders do it, warm or cold page cache, each step timed by the
// host clock around its whole load. Reference only: pinscope shares no code with it.
//
//   nvcc -O2 -std=c++17 -o fileload scripts/probes/fileload.cu && ./fileload FILE [warm|cold]
//
// Steps, in this order in one process: read() into malloc then one cudaMemcpy; mmap then one copy
// of the whole mapping; with REGISTER=1, mmap + cudaHostRegister(ReadOnly) + one async copy
// (registering a private mapping of an evicted file never returned on driver 580: run it under
// `timeout`); pread into a pinned 16 MiB x 3 ring, then 64 MiB x 3; the same with O_DIRECT;
// O_DIRECT with 8 threads per chunk into a 16 MiB x 3 ring. `cold` drops the file's pages before
// each step: with DROP=fadvise by fdatasync + posix_fadvise(DONTNEED), as pinscope does (no root),
// else by writing 3 to /proc/sys/vm/drop_caches (root).
// Options (environment):
//   ONLY=read|mmap|register|pread|direct|direct8  only that step, alone in its process (register also
//                needs REGISTER=1)
//   CH=16|64     only that chunk size of the ring steps (MiB)
//   FAST=1       no read and no O_DIRECT steps
//   PIECES=FILE  the mmap step copies per "offset bytes" line of FILE (the tensor table, from
//                `pinscope model --json FILE`) instead of the whole mapping
//   SHARED=1     map the file MAP_SHARED (as llama.cpp, safetensors and pinscope), else MAP_PRIVATE
//   SPLIT=1      the ring as three pinned buffers instead of one
//   PAUSE=N      sleep N s before each ring step
//   RUNS=1       print each ring buffer's physically contiguous runs (/proc/self/pagemap, root)
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <thread>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
using clk = std::chrono::steady_clock;
static size_t N; static char* dev; static const char* path; static bool cold;
static void drop() { if (!cold) return;
  const char* d = getenv("DROP"); if (d && !strcmp(d, "fadvise")) { int fd = open(path, O_RDONLY); fdatasync(fd); posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); close(fd); return; }
  sync(); FILE* f = fopen("/proc/sys/vm/drop_caches", "w"); if (f) { fputs("3", f); fclose(f); } }
static bool step(const char* name) { const char* o = getenv("ONLY"); return !o || !strcmp(o, name); }
static void rep(const char* w, clk::time_point a, double extra = -1) {
  double s = std::chrono::duration<double>(clk::now() - a).count();
  printf("%-52s %s %7.3f s %6.2f GB/s", w, cold ? "cold" : "warm", s, N / s / 1e9);
  if (extra >= 0) printf("  (register %.3f s)", extra);
  printf("\n"); fflush(stdout);
}
static void runs(const char* what, char* p, size_t len) {  // physically contiguous runs of a buffer (/proc/self/pagemap, root)
  if (!getenv("RUNS")) return; int fd = open("/proc/self/pagemap", O_RDONLY); if (fd < 0) { printf("  (%s: no pagemap)\n", what); return; }
  size_t pages = len / 4096, n = 0, big = 0, cur = 0; uint64_t prev = 0; bool any = false;
  for (size_t i = 0; i < pages; i++) { uint64_t e = 0; pread(fd, &e, 8, ((uintptr_t)p / 4096 + i) * 8); uint64_t pfn = e & ((1ull << 55) - 1);
    if (pfn) any = true; if (i == 0 || pfn != prev + 1) { n++; cur = 0; } cur++; if (cur > big) big = cur; prev = pfn; }
  close(fd); if (!any) { printf("  (%s: pagemap gives no frame numbers)\n", what); return; }
  printf("  (%s: %zu MiB in %zu physically contiguous runs, largest %zu KiB)\n", what, len >> 20, n, big * 4); fflush(stdout); }
int main(int c, char** v) {
  path = v[1]; cold = c > 2 && v[2][0] == 'c'; bool reg = getenv("REGISTER") != nullptr; bool fast = getenv("FAST") != nullptr; const char* pieces = getenv("PIECES"); struct stat st; stat(path, &st); N = st.st_size & ~size_t(4095);
  CK(cudaMalloc(&dev, N)); cudaStream_t s; CK(cudaStreamCreate(&s));
  if (!fast && step("read")) { drop(); auto a = clk::now(); int fd = open(path, O_RDONLY); char* h = (char*)malloc(N); size_t o = 0;
    while (o < N) { ssize_t r = read(fd, h + o, N - o); if (r <= 0) break; o += r; }
    CK(cudaMemcpy(dev, h, N, cudaMemcpyHostToDevice)); rep("read() all to malloc, cudaMemcpy (pageable)", a); free(h); close(fd); }
  if (step("mmap")) { std::vector<std::pair<size_t, size_t>> t; if (pieces) { FILE* pf = fopen(pieces, "r"); size_t off, len; while (pf && fscanf(pf, "%zu %zu", &off, &len) == 2) if (off + len <= N) t.push_back({off, len}); if (pf) fclose(pf); }
    drop(); auto a = clk::now(); int fd = open(path, O_RDONLY); char* m = (char*)mmap(0, N, PROT_READ, getenv("SHARED") ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    if (getenv("SHARED")) printf("(mmap: MAP_SHARED mapping)\n");
    if (t.empty()) { CK(cudaMemcpy(dev, m, N, cudaMemcpyHostToDevice)); rep("mmap, cudaMemcpy from the mapping (pageable)", a); }
    else { for (auto& x : t) CK(cudaMemcpy(dev + x.first, m + x.first, x.second, cudaMemcpyHostToDevice)); rep("mmap, cudaMemcpy per tensor (PIECES)", a); }
    munmap(m, N); close(fd); }
  if (reg && step("register")) { drop(); auto a = clk::now(); int fd = open(path, O_RDONLY); char* m = (char*)mmap(0, N, PROT_READ, getenv("SHARED") ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    if (getenv("SHARED")) printf("(register: MAP_SHARED mapping)\n"); fflush(stdout);
    auto r0 = clk::now(); cudaError_t e = cudaHostRegister(m, N, cudaHostRegisterReadOnly);
    double reg = std::chrono::duration<double>(clk::now() - r0).count();
    if (e) printf("mmap + cudaHostRegister(ReadOnly): %s\n", cudaGetErrorString(e));
    else { CK(cudaMemcpyAsync(dev, m, N, cudaMemcpyHostToDevice, s)); CK(cudaStreamSynchronize(s)); rep("mmap + cudaHostRegister(ReadOnly), async copy", a, reg); CK(cudaHostUnregister(m)); }
    munmap(m, N); close(fd); }
  for (int direct = 0; direct < 2; direct++) for (size_t ch : {size_t(16) << 20, size_t(64) << 20}) {
    if ((fast && direct) || !step(direct ? "direct" : "pread")) continue;
    if (getenv("CH") && size_t(atoi(getenv("CH"))) << 20 != ch) continue;
    if (getenv("PAUSE")) sleep(atoi(getenv("PAUSE")));
    const bool split = getenv("SPLIT") != nullptr;
    drop(); const int R = 3; char* slot[R]; char* pin = nullptr;
    if (split) { for (auto& x : slot) CK(cudaHostAlloc((void**)&x, ch, 0)); } else { CK(cudaHostAlloc((void**)&pin, ch * R, 0)); for (int k = 0; k < R; k++) slot[k] = pin + k * ch; }
    for (int k = 0; k < R; k++) runs(k == 0 ? "slot 0" : k == 1 ? "slot 1" : "slot 2", slot[k], ch);
    cudaEvent_t ev[R]; for (auto& x : ev) CK(cudaEventCreate(&x)); double rs = 0, ws = 0;
    auto a = clk::now(); int fd = open(path, O_RDONLY | (direct ? O_DIRECT : 0)); size_t o = 0; int i = 0; bool used[R] = {};
    while (o < N) { int k = i % R; if (used[k]) { auto w = clk::now(); CK(cudaEventSynchronize(ev[k])); ws += std::chrono::duration<double>(clk::now() - w).count(); }
      auto r0 = clk::now(); size_t n = std::min(ch, N - o), got = 0; while (got < n) { ssize_t r = pread(fd, slot[k] + got, n - got, o + got); if (r <= 0) { printf("pread %zd\n", r); exit(1); } got += r; }
      rs += std::chrono::duration<double>(clk::now() - r0).count();
      CK(cudaMemcpyAsync(dev + o, slot[k], n, cudaMemcpyHostToDevice, s)); CK(cudaEventRecord(ev[k], s)); used[k] = true; o += n; i++; }
    { auto w = clk::now(); CK(cudaStreamSynchronize(s)); ws += std::chrono::duration<double>(clk::now() - w).count(); }
    char w[96]; snprintf(w, sizeof w, "pread%s into a %zu MiB x 3 pinned ring", direct ? "(O_DIRECT)" : "", ch >> 20); rep(w, a);
    printf("  (read %.3f s, wait %.3f s%s)\n", rs, ws, split ? ", 3 separate buffers" : ", one buffer"); fflush(stdout);
    close(fd); if (split) { for (auto x : slot) cudaFreeHost(x); } else cudaFreeHost(pin); }
  if (!fast && step("direct8")) { const int T = 8; drop(); const int R = 3; size_t ch = size_t(16) << 20; char* pin; CK(cudaHostAlloc((void**)&pin, ch * R, 0));
    auto a = clk::now(); int fd = open(path, O_RDONLY | O_DIRECT); cudaEvent_t ev[R]; for (auto& x : ev) CK(cudaEventCreate(&x)); bool used[R] = {};
    size_t o = 0; int i = 0;
    while (o < N) { int k = i % R; if (used[k]) CK(cudaEventSynchronize(ev[k])); size_t n = std::min(ch, N - o);
      std::vector<std::thread> th; for (int t = 0; t < T; t++) th.emplace_back([&, t] { size_t per = n / T, off = t * per, len = t == T - 1 ? n - off : per;
        size_t got = 0; while (got < len) { ssize_t r = pread(fd, pin + k * ch + off + got, len - got, o + off + got); if (r <= 0) break; got += r; } });
      for (auto& x : th) x.join(); CK(cudaMemcpyAsync(dev + o, pin + k * ch, n, cudaMemcpyHostToDevice, s)); CK(cudaEventRecord(ev[k], s)); used[k] = true; o += n; i++; }
    CK(cudaStreamSynchronize(s)); rep("pread(O_DIRECT) 8 threads into a 16 MiB x 3 pinned ring", a); close(fd); cudaFreeHost(pin); }
  return 0;
}
