// Bidirectional copies to every GPU at once: is the H2D figure higher when each GPU's D2H copy
// ends before its H2D copy (one copy each way, as pinscope times a bidirectional case) than when
// the D2H direction is kept busy for the whole H2D copy (as nvbandwidth's bidirectional tests do)?
// Build: nvcc -O3 -o bidir_probe bidir_probe.cu ; run: ./bidir_probe [MiB=512] [reps=7]
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
struct G { char *hs, *hd, *ds, *dd; cudaStream_t up, down; cudaEvent_t a, b, c, d; };
int main(int argc, char** argv) {
  size_t mib = argc > 1 ? atoi(argv[1]) : 512, n = mib << 20; int reps = argc > 2 ? atoi(argv[2]) : 7;
  int ng = 0; CK(cudaGetDeviceCount(&ng));
  std::vector<G> g(ng);
  for (int i = 0; i < ng; i++) {
    CK(cudaSetDevice(i));
    CK(cudaHostAlloc((void**)&g[i].hs, n, cudaHostAllocPortable)); CK(cudaHostAlloc((void**)&g[i].hd, 4 * n, cudaHostAllocPortable));
    CK(cudaMalloc(&g[i].ds, n)); CK(cudaMalloc(&g[i].dd, 4 * n));
    CK(cudaStreamCreateWithFlags(&g[i].up, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&g[i].down, cudaStreamNonBlocking));
    CK(cudaEventCreate(&g[i].a)); CK(cudaEventCreate(&g[i].b)); CK(cudaEventCreate(&g[i].c)); CK(cudaEventCreate(&g[i].d));
  }
  for (int reverse : {1, 4}) {  // D2H copies queued against one H2D copy
    std::vector<std::vector<double>> up(ng), down(ng);
    for (int r = 0; r < reps; r++) {
      for (int i = 0; i < ng; i++) { CK(cudaSetDevice(i)); CK(cudaDeviceSynchronize()); }
      for (int i = 0; i < ng; i++) {
        CK(cudaSetDevice(i));
        CK(cudaEventRecord(g[i].a, g[i].up)); CK(cudaEventRecord(g[i].c, g[i].down));
        for (int k = 0; k < reverse; k++) CK(cudaMemcpyAsync(g[i].hd + (k % 4) * n, g[i].dd + (k % 4) * n, n, cudaMemcpyDeviceToHost, g[i].down));
        CK(cudaMemcpyAsync(g[i].ds, g[i].hs, n, cudaMemcpyHostToDevice, g[i].up));
        CK(cudaEventRecord(g[i].b, g[i].up)); CK(cudaEventRecord(g[i].d, g[i].down));
      }
      for (int i = 0; i < ng; i++) {
        CK(cudaSetDevice(i)); CK(cudaEventSynchronize(g[i].b)); CK(cudaEventSynchronize(g[i].d));
        float ms = 0, md = 0; CK(cudaEventElapsedTime(&ms, g[i].a, g[i].b)); CK(cudaEventElapsedTime(&md, g[i].c, g[i].d));
        up[i].push_back(n / (ms / 1e3) / 1e9); down[i].push_back(reverse * n / (md / 1e3) / 1e9);
      }
    }
    double sum = 0;
    printf("%d D2H copy(ies) of %zu MiB against one H2D copy, %d GPUs at once (median of %d):\n", reverse, mib, ng, reps);
    for (int i = 0; i < ng; i++) {
      std::sort(up[i].begin(), up[i].end()); std::sort(down[i].begin(), down[i].end());
      double u = up[i][reps / 2]; sum += u;
      printf("  GPU %d: H2D %.2f GB/s (while D2H ran at %.2f)\n", i, u, down[i][reps / 2]);
    }
    printf("  sum of H2D: %.2f GB/s\n", sum);
  }
  return 0;
}
