// dlopen-based loader for cuBLAS / cuBLASLt (see cublas_api.h).
#include "hw/cuda/cublas_api.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace cagr::cuda {
namespace {

constexpr const char* kCublas = "libcublas.so.13";
constexpr const char* kCublasLt = "libcublasLt.so.13";

std::string envDir(const char* var, const char* suffix) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return "";
  return std::string(v) + suffix;
}

/// Folders to look in after the loader path, most specific first.
std::vector<std::string> candidateDirs() {
  std::vector<std::string> dirs;
  for (const std::string& d :
       {envDir("CUDA_HOME", "/lib64"), envDir("CUDA_PATH", "/lib64"), std::string("/usr/local/cuda/lib64"),
        std::string("/usr/local/cuda/targets/x86_64-linux/lib")}) {
    if (!d.empty()) dirs.push_back(d);
  }
  for (const char* pattern :
       {"/usr/local/cuda-13*/lib64", "/usr/local/cuda-13*/targets/x86_64-linux/lib",
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib",
        "/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib", "/usr/lib/python3*/dist-packages/nvidia/cu13/lib",
        "/usr/local/lib/python3*/site-packages/nvidia/cu13/lib",
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/cublas/lib"}) {
    glob_t g{};
    if (glob(pattern, 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) dirs.emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
  }
  return dirs;
}

/// dlopen(name) from `dir` ("" = loader path); records the attempt.
void* tryOpen(const std::string& dir, const char* name, std::string* tried, std::string* path) {
  const std::string full = dir.empty() ? std::string(name) : dir + "/" + name;
  void* h = dlopen(full.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (h != nullptr) {
    *path = full;
    return h;
  }
  const char* err = dlerror();
  if (!tried->empty()) *tried += "; ";
  *tried += full + (err != nullptr ? std::string(" (") + err + ")" : "");
  return nullptr;
}

/// libcublasLt then libcublas from the same folder (cuBLAS needs its Lt).
Status openLibraries(void** lt, void** blas, CublasApi* api) {
  std::vector<std::string> dirs;
  const std::string forced = envDir("CAGR_CUBLAS_DIR", "");
  if (!forced.empty()) dirs.push_back(forced);
  dirs.push_back("");
  for (const std::string& d : candidateDirs()) dirs.push_back(d);
  std::string tried;
  for (const std::string& d : dirs) {
    *lt = tryOpen(d, kCublasLt, &tried, &api->cublasLtPath);
    if (*lt == nullptr) continue;
    *blas = tryOpen(d, kCublas, &tried, &api->cublasPath);
    if (*blas != nullptr) return Status::ok();
    dlclose(*lt);
    *lt = nullptr;
  }
  return notFound(std::string("cagr-profile-cuda: cannot load ") + kCublas + " and " + kCublasLt +
                  " (set CAGR_CUBLAS_DIR to the folder that holds them); tried: " + tried);
}

template <typename Fn>
Status bind(void* lib, const char* name, Fn* out) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr) return notFound(std::string("cuBLAS symbol ") + name + " not found");
  *out = reinterpret_cast<Fn>(sym);
  return Status::ok();
}

Status bindAll(void* lt, void* blas, CublasApi* a) {
  CAGR_RETURN_IF_ERROR(bind(blas, "cublasCreate_v2", &a->create));
  CAGR_RETURN_IF_ERROR(bind(blas, "cublasDestroy_v2", &a->destroy));
  CAGR_RETURN_IF_ERROR(bind(blas, "cublasSetStream_v2", &a->setStream));
  CAGR_RETURN_IF_ERROR(bind(blas, "cublasSetMathMode", &a->setMathMode));
  CAGR_RETURN_IF_ERROR(bind(blas, "cublasGetVersion_v2", &a->getVersion));
  CAGR_RETURN_IF_ERROR(bind(blas, "cublasSgemm_v2", &a->sgemm));
  CAGR_RETURN_IF_ERROR(bind(blas, "cublasGemmEx", &a->gemmEx));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtCreate", &a->ltCreate));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtDestroy", &a->ltDestroy));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtGetVersion", &a->ltGetVersion));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatmul", &a->ltMatmul));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatmulDescCreate", &a->ltDescCreate));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatmulDescDestroy", &a->ltDescDestroy));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatmulDescSetAttribute", &a->ltDescSetAttribute));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatrixLayoutCreate", &a->ltLayoutCreate));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatrixLayoutDestroy", &a->ltLayoutDestroy));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatmulPreferenceCreate", &a->ltPrefCreate));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatmulPreferenceDestroy", &a->ltPrefDestroy));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatmulPreferenceSetAttribute", &a->ltPrefSetAttribute));
  CAGR_RETURN_IF_ERROR(bind(lt, "cublasLtMatmulAlgoGetHeuristic", &a->ltAlgoGetHeuristic));
  return Status::ok();
}

}  // namespace

StatusOr<const CublasApi*> loadCublas() {
  static std::mutex mu;
  static CublasApi api;
  static Status loaded = internalError("cuBLAS not loaded yet");
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!tried) {
    tried = true;
    void* lt = nullptr;
    void* blas = nullptr;
    loaded = openLibraries(&lt, &blas, &api);
    if (loaded.isOk()) loaded = bindAll(lt, blas, &api);  // the libraries stay loaded until exit
  }
  if (!loaded.isOk()) return loaded;
  return &api;
}

std::string cublasVersionString(int v) {
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

Status cublasStatus(cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return internalError(what + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

}  // namespace cagr::cuda
