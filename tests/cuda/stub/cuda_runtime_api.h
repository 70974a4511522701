#pragma once
// A stand-in for the CUDA runtime's declarations (cuda_runtime_api.h): enough
// to type-check our CUDA-only code against LibTorch's c10/cuda headers where
// there is no CUDA toolkit (tests/cuda/CMakeLists.txt: cuda.typecheck_1_13).
#include <cstddef>
typedef enum cudaError { cudaSuccess = 0, cudaErrorNotReady = 600, cudaErrorMemoryAllocation = 2 } cudaError_t;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 };
#define cudaEventDefault 0
#define cudaEventDisableTiming 2
extern "C" {
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t);
const char* cudaGetErrorName(cudaError_t);
cudaError_t cudaGetDevice(int*);
cudaError_t cudaSetDevice(int);
cudaError_t cudaGetDeviceCount(int*);
cudaError_t cudaMemGetInfo(size_t*, size_t*);
enum cudaDeviceAttr { cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76 };
cudaError_t cudaDeviceGetAttribute(int*, enum cudaDeviceAttr, int);
cudaError_t cudaStreamQuery(cudaStream_t);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t*, unsigned);
cudaError_t cudaEventDestroy(cudaEvent_t);
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t);
cudaError_t cudaEventQuery(cudaEvent_t);
cudaError_t cudaEventSynchronize(cudaEvent_t);
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned);
cudaError_t cudaEventElapsedTime(float*, cudaEvent_t, cudaEvent_t);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind);
cudaError_t cudaStreamGetPriority(cudaStream_t, int*);
cudaError_t cudaDeviceGetStreamPriorityRange(int*, int*);
cudaError_t cudaGetDeviceProperties(void*, int);
}
// SPDX-License-Identifier: GPL-3.0-or-later
