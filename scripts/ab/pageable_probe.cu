// Reference for pinscope's "pageable copy-engine" cases: plain cudaMemcpy from/to malloc'd
// (pageable) memory, 512 MiB, first-touched, 2 warm-up copies, then N timed copies each way;
// prints the median and range in GB/s (1e9 B/s), wall clock per copy (pageable copies are
// synchronous with the host).
// Build: nvcc -O3 -arch=sm_90 -o pageable_probe pageable_probe.cu ; run: ./pageable_probe [N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
using clk = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 15;
  const size_t size = 512ull << 20;
  char* host = (char*)malloc(size);
  memset(host, 1, size);
  char* dev; CK(cudaMalloc(&dev, size));
  for (int dir = 0; dir < 2; dir++) {
    auto copy = [&] {
      if (dir == 0) CK(cudaMemcpy(dev, host, size, cudaMemcpyHostToDevice));
      else CK(cudaMemcpy(host, dev, size, cudaMemcpyDeviceToHost));
    };
    copy(); copy();
    std::vector<double> gbs;
    for (int i = 0; i < n; i++) {
      auto a = clk::now();
      copy();
      auto b = clk::now();
      gbs.push_back(size / std::chrono::duration<double>(b - a).count() / 1e9);
    }
    std::sort(gbs.begin(), gbs.end());
    printf("pageable cudaMemcpy 512MiB %s: median %.2f GB/s (min %.2f, max %.2f, n=%d)\n",
           dir == 0 ? "h2d" : "d2h", gbs[n / 2], gbs.front(), gbs.back(), n);
  }
  CK(cudaFree(dev));
  free(host);
  return 0;
}
