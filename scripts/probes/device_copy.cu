// Device-local copy on one GPU, measured the ways that matter for pinscope's `device-copy`:
// the copy engine (cudaMemcpyAsync device to device, what nvbandwidth's device_local_copy times)
// and SM copy kernels of several shapes (pinscope's grid-stride uint4 kernel at 4 blocks of 512
// per SM, unrolled variants that keep more loads in flight, streaming cache hints, and one
// contiguous slice per block). Bytes per copy = size, as
// nvbandwidth counts device_local_copy. GB/s = 1e9 B/s; median of 7 rounds of 16 copies.
//
//   nvcc -O3 -arch=sm_90 -o device_copy scripts/probes/device_copy.cu && ./device_copy [MiB]
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

__global__ void copy_v4(const uint4* __restrict__ s, uint4* __restrict__ d, uint64_t n) {
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) d[i] = s[i];
}

template <int U>
__global__ void copy_v4_unroll(const uint4* __restrict__ s, uint4* __restrict__ d, uint64_t n) {
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; k++) v[k] = s[i + k * stride];
#pragma unroll
    for (int k = 0; k < U; k++) d[i + k * stride] = v[k];
  }
  for (; i < n; i += stride) d[i] = s[i];
}

// Streaming cache hints: loads and stores marked evict-first (ld.global.cs / st.global.cs), so a
// copy that touches every byte once does not keep it in L2.
template <int U>
__global__ void copy_v4_cs(const uint4* __restrict__ s, uint4* __restrict__ d, uint64_t n) {
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; k++) v[k] = __ldcs(s + i + k * stride);
#pragma unroll
    for (int k = 0; k < U; k++) __stcs(d + i + k * stride, v[k]);
  }
  for (; i < n; i += stride) __stcs(d + i, __ldcs(s + i));
}

// Each block copies one contiguous slice (no grid stride): long runs of one DRAM page per block.
template <int U>
__global__ void copy_v4_slice(const uint4* __restrict__ s, uint4* __restrict__ d, uint64_t n) {
  const uint64_t per = (n + gridDim.x - 1) / gridDim.x;
  const uint64_t lo = (uint64_t)blockIdx.x * per, hi = lo + per < n ? lo + per : n;
  uint64_t i = lo + threadIdx.x;
  for (; i + (U - 1) * blockDim.x < hi; i += U * blockDim.x) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; k++) v[k] = s[i + k * blockDim.x];
#pragma unroll
    for (int k = 0; k < U; k++) d[i + k * blockDim.x] = v[k];
  }
  for (; i < hi; i += blockDim.x) d[i] = s[i];
}

template <typename F>
static double measure(F&& launch, size_t bytes, cudaStream_t st) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int w = 0; w < 4; w++) launch();
  CK(cudaStreamSynchronize(st));
  std::vector<double> gbs;
  for (int r = 0; r < 7; r++) {
    CK(cudaEventRecord(a, st));
    for (int k = 0; k < 16; k++) launch();
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    gbs.push_back(16.0 * bytes / (ms * 1e-3) / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  return gbs[gbs.size() / 2];
}

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
  size_t bytes = mib << 20, n = bytes / 16;
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  void *s, *d; CK(cudaMalloc(&s, bytes)); CK(cudaMalloc(&d, bytes));
  CK(cudaMemset(s, 1, bytes)); CK(cudaMemset(d, 0, bytes));
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  auto S = (const uint4*)s; auto D = (uint4*)d;
  std::printf("device_copy %zu MiB, %d SMs (GB/s, bytes per copy = size)\n", mib, sms);
  std::printf("  %-40s %8.1f\n", "copy engine cudaMemcpyAsync D2D",
              measure([&] { CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, st)); }, bytes, st));
  for (int per_sm : {2, 4, 8}) {
    char name[64];
    std::snprintf(name, sizeof name, "kernel v4 x1, %d x 512 per SM%s", per_sm, per_sm == 4 ? " (pinscope)" : "");
    std::printf("  %-40s %8.1f\n", name,
                measure([&] { copy_v4<<<sms * per_sm, 512, 0, st>>>(S, D, n); }, bytes, st));
  }
  for (int per_sm : {2, 4}) {
    char name[64];
    std::snprintf(name, sizeof name, "kernel v4 unroll 4, %d x 512 per SM", per_sm);
    std::printf("  %-40s %8.1f\n", name,
                measure([&] { copy_v4_unroll<4><<<sms * per_sm, 512, 0, st>>>(S, D, n); }, bytes, st));
    std::snprintf(name, sizeof name, "kernel v4 unroll 8, %d x 512 per SM", per_sm);
    std::printf("  %-40s %8.1f\n", name,
                measure([&] { copy_v4_unroll<8><<<sms * per_sm, 512, 0, st>>>(S, D, n); }, bytes, st));
  }
  for (int per_sm : {1, 2, 4}) {
    char name[64];
    std::snprintf(name, sizeof name, "kernel v4 unroll 4 cs, %d x 1024 per SM", per_sm);
    std::printf("  %-40s %8.1f\n", name,
                measure([&] { copy_v4_cs<4><<<sms * per_sm, 1024, 0, st>>>(S, D, n); }, bytes, st));
    std::snprintf(name, sizeof name, "kernel v4 unroll 8 cs, %d x 512 per SM", per_sm);
    std::printf("  %-40s %8.1f\n", name,
                measure([&] { copy_v4_cs<8><<<sms * per_sm, 512, 0, st>>>(S, D, n); }, bytes, st));
    std::snprintf(name, sizeof name, "kernel v4 slice unroll 4, %d x 1024 per SM", per_sm);
    std::printf("  %-40s %8.1f\n", name,
                measure([&] { copy_v4_slice<4><<<sms * per_sm, 1024, 0, st>>>(S, D, n); }, bytes, st));
  }
  std::vector<uint8_t> h(16);
  CK(cudaMemcpy(h.data(), d, 16, cudaMemcpyDeviceToHost));
  std::printf("  data check: %s\n", h[0] == 1 && h[15] == 1 ? "ok" : "MISMATCH");
  return 0;
}
