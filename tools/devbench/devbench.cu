// devbench.cu - device characterization microbenchmark for dlperf.
//
// Measures, on GPU 0 as found (no clock or power changes):
//   fp32_tflops     peak FP32 rate: FMA chains in registers (2 flop per FMA)
//   fp16_tc_tflops  FP16 tensor-core rate: cuBLAS GemmEx 8192^3, fp16 in/out,
//                   fp32 accumulate (cuBLAS picks the tensor-core kernel)
//   bf16_tc_tflops  the same with bf16 operands
//   hbm_gbs         device-memory bandwidth: 2 GiB copy, bytes read + written
//   l2_gbs          L2 bandwidth: repeated reads of a working set of a quarter
//                   of L2 (bytes read)
//   launch_us       empty-kernel launch, back-to-back (per launch); the
//                   launch + synchronize round trip is launch_sync_us
// Prints one JSON object on stdout. Every timing is the median of several
// repetitions timed with CUDA events after a warm-up; inputs are random.
// Build: nvcc -O3 -arch=sm_90 -o devbench devbench.cu -lcublas
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#define CK(x)                                                              \
    do {                                                                   \
        cudaError_t e_ = (x);                                              \
        if (e_ != cudaSuccess) {                                           \
            fprintf(stderr, "devbench: %s failed: %s (%s:%d)\n", #x,       \
                    cudaGetErrorString(e_), __FILE__, __LINE__);           \
            exit(1);                                                       \
        }                                                                  \
    } while (0)
#define CKB(x)                                                             \
    do {                                                                   \
        cublasStatus_t s_ = (x);                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                 \
            fprintf(stderr, "devbench: %s failed: status %d (%s:%d)\n",    \
                    #x, (int)s_, __FILE__, __LINE__);                      \
            exit(1);                                                       \
        }                                                                  \
    } while (0)
#define CKL() CK(cudaGetLastError())

static const int FMA_CHAINS = 8;
static const int FMA_ITERS = 4096;

// Each thread runs FMA_CHAINS independent FMA chains of FMA_ITERS steps.
__global__ void fma_kernel(float *out, float a, float b) {
    float x[FMA_CHAINS];
    for (int c = 0; c < FMA_CHAINS; c++) x[c] = threadIdx.x * 1e-3f + c;
    for (int i = 0; i < FMA_ITERS; i++) {
#pragma unroll
        for (int c = 0; c < FMA_CHAINS; c++) x[c] = fmaf(x[c], a, b);
    }
    float s = 0.f;
    for (int c = 0; c < FMA_CHAINS; c++) s += x[c];
    if (s == 1234.5f) out[blockIdx.x] = s;  // keeps the loop alive
}

// Grid-stride copy of n float4: src [n] -> dst [n].
__global__ void copy_kernel(const float4 *__restrict__ src,
                            float4 *__restrict__ dst, size_t n) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride)
        dst[i] = src[i];
}

// Every block reads the whole buffer buf [n] float4 `passes` times.
__global__ void l2_read_kernel(const float4 *__restrict__ buf, size_t n,
                               int passes, float *out) {
    float acc = 0.f;
    for (int p = 0; p < passes; p++) {
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
             i += (size_t)gridDim.x * blockDim.x) {
            float4 v = __ldcg(&buf[(i + p * 4096) % n]);
            acc += v.x + v.y + v.z + v.w;
        }
    }
    if (acc == 1234.5f) out[0] = acc;
}

__global__ void empty_kernel() {}

// Fills x [n] with pseudo-random values in [-1, 1).
__global__ void fill_kernel(float *x, size_t n, unsigned seed) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        x[i] = (h & 0xffffff) / 8388608.0f - 1.0f;
    }
}
__global__ void to_half_kernel(const float *x, __half *y, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2half(x[i]);
}
__global__ void to_bf16_kernel(const float *x, __nv_bfloat16 *y, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2bfloat16(x[i]);
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Times fn() reps times with events after warm launches; median ms.
template <class F> static double time_ms(F fn, int warm, int reps) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < warm; i++) fn();
    CK(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(a));
        fn();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return median(t);
}

static double gemm_tflops(cublasHandle_t h, cudaDataType_t type, int n) {
    size_t nn = (size_t)n * n;
    float *tmp;
    void *A, *B, *C;
    CK(cudaMalloc(&tmp, nn * sizeof(float)));
    CK(cudaMalloc(&A, nn * 2));
    CK(cudaMalloc(&B, nn * 2));
    CK(cudaMalloc(&C, nn * 2));
    int tb = 256;
    unsigned blocks = (unsigned)((nn + tb - 1) / tb);
    for (int k = 0; k < 2; k++) {
        fill_kernel<<<blocks, tb>>>(tmp, nn, 17u + k);
        CKL();
        void *dst = k == 0 ? A : B;
        if (type == CUDA_R_16F)
            to_half_kernel<<<blocks, tb>>>(tmp, (__half *)dst, nn);
        else
            to_bf16_kernel<<<blocks, tb>>>(tmp, (__nv_bfloat16 *)dst, nn);
        CKL();
    }
    float alpha = 1.f, beta = 0.f;
    auto fn = [&]() {
        CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, type,
                         n, B, type, n, &beta, C, type, n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT));
    };
    double ms = time_ms(fn, 5, 20);
    CK(cudaFree(tmp));
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    return 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12;
}

int main(void) {
    int dev = 0;
    CK(cudaSetDevice(dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    int clock_khz = 0, sms = p.multiProcessorCount;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    float *sink;
    CK(cudaMalloc(&sink, 1 << 20));

    // FP32 FMA peak.
    int fma_blocks = sms * 16, fma_threads = 256;
    double fma_ms = time_ms(
        [&]() {
            fma_kernel<<<fma_blocks, fma_threads>>>(sink, 0.999f, 1e-4f);
            CKL();
        },
        3, 15);
    double fp32 = 2.0 * FMA_CHAINS * FMA_ITERS * (double)fma_blocks *
                  fma_threads / (fma_ms * 1e-3) / 1e12;

    // Tensor cores through cuBLAS.
    cublasHandle_t h;
    CKB(cublasCreate(&h));
    double fp16 = gemm_tflops(h, CUDA_R_16F, 8192);
    double bf16 = gemm_tflops(h, CUDA_R_16BF, 8192);
    CKB(cublasDestroy(h));

    // HBM: 2 GiB copy.
    size_t hbm_bytes = (size_t)2 << 30;
    size_t n4 = hbm_bytes / sizeof(float4);
    float4 *src, *dst;
    CK(cudaMalloc(&src, hbm_bytes));
    CK(cudaMalloc(&dst, hbm_bytes));
    fill_kernel<<<(unsigned)((n4 * 4 + 255) / 256), 256>>>((float *)src,
                                                          n4 * 4, 5u);
    CKL();
    double hbm_ms = time_ms(
        [&]() {
            copy_kernel<<<sms * 8, 512>>>(src, dst, n4);
            CKL();
        },
        3, 20);
    double hbm = 2.0 * hbm_bytes / (hbm_ms * 1e-3) / 1e9;

    // L2: working set a quarter of L2, read many times.
    size_t l2_ws = (size_t)p.l2CacheSize / 4;
    size_t l2_n4 = l2_ws / sizeof(float4);
    int passes = 64;
    double l2_ms = time_ms(
        [&]() {
            l2_read_kernel<<<sms * 4, 512>>>(src, l2_n4, passes, sink);
            CKL();
        },
        3, 15);
    // The grid-stride loop reads the whole set once per pass.
    double l2 = (double)l2_ws * passes / (l2_ms * 1e-3) / 1e9;
    CK(cudaFree(src));
    CK(cudaFree(dst));

    // Launch latency: back-to-back empty kernels, then launch + sync.
    const int nl = 20000;
    for (int i = 0; i < 1000; i++) empty_kernel<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < nl; i++) empty_kernel<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    double launch_us =
        std::chrono::duration<double, std::micro>(t1 - t0).count() / nl;
    std::vector<double> rt;
    for (int i = 0; i < 2000; i++) {
        auto a = std::chrono::steady_clock::now();
        empty_kernel<<<1, 1>>>();
        CK(cudaDeviceSynchronize());
        auto b = std::chrono::steady_clock::now();
        rt.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    CKL();
    double launch_sync_us = median(rt);
    CK(cudaFree(sink));

    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    printf("{\"gpu_name\": \"%s\", \"sm_count\": %d, \"clock_mhz\": %d, "
           "\"mem_mib\": %zu, \"l2_bytes\": %d, \"cc\": \"%d.%d\", "
           "\"fp32_tflops\": %.2f, \"fp16_tc_tflops\": %.1f, "
           "\"bf16_tc_tflops\": %.1f, \"hbm_gbs\": %.0f, \"l2_gbs\": %.0f, "
           "\"launch_us\": %.2f, \"launch_sync_us\": %.2f, "
           "\"tc_method\": \"cublasGemmEx 8192^3 fp32 accumulate\", "
           "\"measured_utc\": \"%s\", \"tool\": \"devbench 1\"}\n",
           p.name, sms, clock_khz / 1000, p.totalGlobalMem >> 20,
           p.l2CacheSize, p.major, p.minor, fp32, fp16, bf16, hbm, l2,
           launch_us, launch_sync_us, when);
    return 0;
}
