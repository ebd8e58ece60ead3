// One-sided reads for Monsoon: shared-memory mappings of a storage node's exported node region
// (always built) and RDMA verbs over it (built where libibverbs/librdmacm headers exist:
// MONSOON_HAVE_VERBS).
//
// Every error thrown or rejected carries a `code` property: one of the JS RdmaErrorCode values
// (src/rdmaError.ts). Blocking calls (open/fstat/mmap, device open) run in AsyncWorkers. A
// mapping's ArrayBuffer is detached before the memory is unmapped, so no JS view can reach
// freed memory; handles are checked, so a bad or closed one throws instead of crashing.

#include <napi.h>

#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#ifdef MONSOON_HAVE_VERBS
#include <infiniband/verbs.h>
#endif

#include "regionWalk.h"

namespace {

Napi::Error Coded(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  return e;
}

// glibc's malloc_trim(0) off the JS thread: gives the kernel back the free pages of every malloc
// arena, the main (brk) heap's middle included, which free() alone never does (it only shrinks the
// heap's top). A role's JS thread frees much in bursts (gRPC messages' buffers, revm engines) and
// the holes it leaves stay resident otherwise. Releasing 100+ MiB takes ~100 ms of madvise calls,
// so it runs in a worker; a malloc on another thread waits for an arena's lock meanwhile, not for
// the whole trim. Resolves whether anything was released (false without glibc).
class TrimWorker : public Napi::AsyncWorker {
 public:
  explicit TrimWorker(Napi::Env env) : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
#ifdef __GLIBC__
    released_ = malloc_trim(0) == 1;
#endif
  }

  void OnOK() override { deferred_.Resolve(Napi::Boolean::New(Env(), released_)); }

 private:
  Napi::Promise::Deferred deferred_;
  bool released_ = false;
};

struct Mapping {
  void* addr = nullptr;
  size_t bytes = 0;
  Napi::Reference<Napi::ArrayBuffer> buffer;
#ifdef MONSOON_HAVE_VERBS
  ibv_mr* mr = nullptr;
#endif
};

#ifdef MONSOON_HAVE_VERBS
struct Device {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
};

// A reliable-connected queue pair and its completion queue, on port 1 of its device.
struct QueuePair {
  uint32_t device = 0;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  bool busy = false;  // a batch is in flight (one at a time per queue pair)
};

// Posts READs remote[i] -> sges[i] as one chain (one doorbell), only the last signaled (RC
// completes in order, so its completion covers the batch), and polls until it completes. On
// failure sets `code` and `message`.
void PostReads(QueuePair& qp, std::vector<ibv_sge>& sges, const std::vector<uint64_t>& remote, uint32_t rkey,
               const char** code, std::string* message) {
  size_t n = sges.size();
  std::vector<ibv_send_wr> wrs(n);
  for (size_t i = 0; i < n; i++) {
    ibv_send_wr& wr = wrs[i];
    std::memset(&wr, 0, sizeof wr);
    wr.wr_id = i;
    wr.sg_list = &sges[i];
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0;
    wr.wr.rdma.remote_addr = remote[i];
    wr.wr.rdma.rkey = rkey;
    wr.next = i + 1 < n ? &wrs[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(qp.qp, wrs.data(), &bad);
  if (rc != 0) {
    *code = "RDMA_SYSTEM_ERROR";
    *message = std::string("ibv_post_send: ") + std::strerror(rc);
    return;
  }
  ibv_wc wc;
  for (;;) {
    int got = ibv_poll_cq(qp.cq, 1, &wc);
    if (got < 0) {
      *code = "RDMA_SYSTEM_ERROR";
      *message = "ibv_poll_cq failed";
      return;
    }
    if (got == 0) continue;
    if (wc.status != IBV_WC_SUCCESS) {
      *code = "RDMA_CLOSED";
      *message = std::string("RDMA READ failed: ") + ibv_wc_status_str(wc.status) +
                 " (the connection is broken or closed)";
      return;
    }
    if (wc.wr_id + 1 == n) return;
  }
}

// A walk's byte ranges read from a peer's registered region over RDMA: each batch of ranges is
// posted as chains of READs (one doorbell each, up to kChain READs and the staging buffer's
// bytes) into the local registered `staging` memory, then copied where the walk wants them.
class RdmaSource : public monsoon_rdma::RangeSource {
 public:
  RdmaSource(QueuePair& qp, uint8_t* staging, size_t stagingBytes, uint32_t lkey, uint64_t remoteAddr, uint32_t rkey)
      : qp_(qp), staging_(staging), stagingBytes_(stagingBytes), lkey_(lkey), remoteAddr_(remoteAddr), rkey_(rkey) {}

  const char* code = nullptr;

  bool Read(const std::vector<monsoon_rdma::Range>& ranges, std::string* error) override {
    static constexpr size_t kChain = 1024;
    size_t i = 0;
    while (i < ranges.size()) {
      sges_.clear();
      remote_.clear();
      size_t first = i, staged = 0;
      while (i < ranges.size() && sges_.size() < kChain && staged + ranges[i].length <= stagingBytes_) {
        ibv_sge sge;
        sge.addr = reinterpret_cast<uintptr_t>(staging_ + staged);
        sge.length = ranges[i].length;
        sge.lkey = lkey_;
        sges_.push_back(sge);
        remote_.push_back(remoteAddr_ + ranges[i].offset);
        staged += ranges[i].length;
        i++;
      }
      if (sges_.empty()) {
        code = "RDMA_REGION_TOO_SMALL";
        *error = "a READ of " + std::to_string(ranges[i].length) + " B does not fit the staging buffer of " +
                 std::to_string(stagingBytes_) + " B";
        return false;
      }
      PostReads(qp_, sges_, remote_, rkey_, &code, error);
      if (code != nullptr) return false;
      staged = 0;
      for (size_t k = first; k < i; k++) {
        std::memcpy(ranges[k].dst, staging_ + staged, ranges[k].length);
        staged += ranges[k].length;
      }
    }
    return true;
  }

 private:
  QueuePair& qp_;
  uint8_t* staging_;
  size_t stagingBytes_;
  uint32_t lkey_;
  uint64_t remoteAddr_;
  uint32_t rkey_;
  std::vector<ibv_sge> sges_;
  std::vector<uint64_t> remote_;
};

// One batch of RDMA READs: remote [addr, addr + len) into local [laddr, laddr + len), posted as one
// chain (one doorbell), completions polled off the JS thread.
class ReadBatchWorker : public Napi::AsyncWorker {
 public:
  ReadBatchWorker(Napi::Env env, QueuePair* qp, std::vector<ibv_sge> sges, std::vector<uint64_t> remote,
                  uint32_t rkey)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        qp_(qp),
        sges_(std::move(sges)),
        remote_(std::move(remote)),
        rkey_(rkey) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override { PostReads(*qp_, sges_, remote_, rkey_, &code_, &message_); }

  void OnOK() override {
    qp_->busy = false;
    if (code_ != nullptr) {
      deferred_.Reject(Coded(Env(), code_, message_).Value());
      return;
    }
    deferred_.Resolve(Napi::Number::New(Env(), static_cast<double>(sges_.size())));
  }

 private:
  Napi::Promise::Deferred deferred_;
  QueuePair* qp_;
  std::vector<ibv_sge> sges_;
  std::vector<uint64_t> remote_;
  uint32_t rkey_;
  const char* code_ = nullptr;
  std::string message_;
};
#endif

// ---- verified walks (regionWalk.h) ----------------------------------------------------

// A walk's arguments, copied out of JS (so an RDMA walk can run off the JS thread).
struct WalkArgs {
  monsoon_rdma::Geometry geometry;
  std::vector<uint8_t> roots, keys, fetch;
  std::vector<uint32_t> rootOf;
  uint32_t maxTries = 3;

  monsoon_rdma::WalkRequest Request() const {
    monsoon_rdma::WalkRequest r;
    r.roots = roots.data();
    r.rootCount = static_cast<uint32_t>(roots.size() / 32);
    r.keys = keys.data();
    r.rootOf = rootOf.data();
    r.keyCount = static_cast<uint32_t>(rootOf.size());
    r.fetch = fetch.data();
    r.fetchCount = static_cast<uint32_t>(fetch.size() / 32);
    r.maxTries = maxTries;
    return r;
  }
};

// [bucketCount, indexOffset, arenaOffset, totalBytes] checked: integers, a power-of-two bucket
// count, an index before the arena, and (`regionBytes` non-zero) within the region's bytes.
monsoon_rdma::Geometry GeometryArg(Napi::Float64Array ga, uint64_t regionBytes, const char* name) {
  Napi::Env env = ga.Env();
  if (ga.ElementLength() != 4) throw Coded(env, "RDMA_BAD_ARGUMENT", std::string(name) + ": geometry has 4 numbers");
  uint64_t v[4];
  for (size_t i = 0; i < 4; i++) {
    double d = ga[i];
    if (!(d >= 0 && d <= 9007199254740991.0) || d != static_cast<double>(static_cast<uint64_t>(d)))
      throw Coded(env, "RDMA_BAD_ARGUMENT", std::string(name) + ": geometry holds non-negative integers");
    v[i] = static_cast<uint64_t>(d);
  }
  monsoon_rdma::Geometry g{v[0], v[1], v[2], v[3]};
  if (g.bucketCount == 0 || (g.bucketCount & (g.bucketCount - 1)) != 0 ||
      g.indexOffset + g.bucketCount * 128 > g.arenaOffset || g.arenaOffset > g.totalBytes)
    throw Coded(env, "RDMA_BAD_ARGUMENT", std::string(name) + ": the geometry is inconsistent");
  if (regionBytes != 0 && g.totalBytes > regionBytes)
    throw Coded(env, "RDMA_REGION_TOO_SMALL",
                std::string(name) + ": the geometry spans " + std::to_string(g.totalBytes) + " B, the region has " +
                    std::to_string(regionBytes) + " B");
  return g;
}

const char* kWalkUsage =
    "(geometry: Float64Array [bucketCount, indexOffset, arenaOffset, totalBytes], roots: Uint8Array (32 B each), "
    "keys: Uint8Array (32 B each), rootOf: Uint32Array (one per key), fetch: Uint8Array (32 B each), maxTries: 1-16)";

template <typename T>
std::vector<T> CopyTyped(const Napi::Value& v) {
  auto a = v.As<Napi::TypedArrayOf<T>>();
  return std::vector<T>(a.Data(), a.Data() + a.ElementLength());
}

// Parses the walk arguments from info[first..first+5]; `regionBytes` bounds the geometry (0:
// not known here, the peer's memory registration bounds it).
WalkArgs ParseWalkArgs(const Napi::CallbackInfo& info, size_t first, uint64_t regionBytes, const char* name) {
  Napi::Env env = info.Env();
  auto usage = [&](const std::string& why) {
    return Coded(env, "RDMA_BAD_ARGUMENT", std::string(name) + kWalkUsage + ": " + why);
  };
  auto isType = [&](size_t i, napi_typedarray_type t) {
    return info.Length() > first + i && info[first + i].IsTypedArray() &&
           info[first + i].As<Napi::TypedArray>().TypedArrayType() == t;
  };
  if (!isType(0, napi_float64_array) || !isType(1, napi_uint8_array) || !isType(2, napi_uint8_array) ||
      !isType(3, napi_uint32_array) || !isType(4, napi_uint8_array) || info.Length() <= first + 5 ||
      !info[first + 5].IsNumber())
    throw usage("wrong argument types");
  WalkArgs a;
  a.geometry = GeometryArg(info[first].As<Napi::Float64Array>(), regionBytes, name);
  a.roots = CopyTyped<uint8_t>(info[first + 1]);
  a.keys = CopyTyped<uint8_t>(info[first + 2]);
  a.rootOf = CopyTyped<uint32_t>(info[first + 3]);
  a.fetch = CopyTyped<uint8_t>(info[first + 4]);
  double tries = info[first + 5].As<Napi::Number>().DoubleValue();
  if (a.roots.size() % 32 != 0 || a.keys.size() % 32 != 0 || a.fetch.size() % 32 != 0)
    throw usage("roots, keys and fetch hold 32-byte hashes");
  if (a.rootOf.size() != a.keys.size() / 32) throw usage("one rootOf per key");
  for (uint32_t r : a.rootOf)
    if (r >= a.roots.size() / 32) throw usage("rootOf names a root that is not there");
  if (!(tries >= 1 && tries <= 16) || tries != static_cast<double>(static_cast<uint32_t>(tries)))
    throw usage("maxTries is 1 to 16");
  a.maxTries = static_cast<uint32_t>(tries);
  return a;
}

template <typename T>
Napi::TypedArrayOf<T> TypedOf(Napi::Env env, const std::vector<T>& v) {
  auto a = Napi::TypedArrayOf<T>::New(env, v.size());
  if (!v.empty()) std::memcpy(a.Data(), v.data(), v.size() * sizeof(T));
  return a;
}

// Why a walk has no answer: its source failed (`sourceCode`), or a verified node was malformed.
bool WalkFailed(const monsoon_rdma::WalkResult& r) { return !r.sourceError.empty() || !r.malformed.empty(); }

Napi::Error WalkError(Napi::Env env, const monsoon_rdma::WalkResult& r, const char* sourceCode) {
  if (!r.sourceError.empty()) return Coded(env, sourceCode, r.sourceError);
  return Coded(env, "RDMA_BAD_REGION", r.malformed);
}

// The walk's answer as JS: { data, bounds, hashes, ok, values, proof, proofBounds, fetched, counters }.
Napi::Object WalkResultToJs(Napi::Env env, monsoon_rdma::WalkResult& r) {
  Napi::Object o = Napi::Object::New(env);
  auto* data = new monsoon_rdma::ByteVector(std::move(r.data));
  o.Set("data", Napi::Buffer<uint8_t>::New(env, data->data(), data->size(),
                                           [](Napi::Env, uint8_t*, monsoon_rdma::ByteVector* d) { delete d; }, data));
  o.Set("bounds", TypedOf(env, r.bounds));
  o.Set("hashes", TypedOf(env, r.hashes));
  o.Set("ok", TypedOf(env, r.ok));
  o.Set("values", TypedOf(env, r.values));
  o.Set("proof", TypedOf(env, r.proof));
  o.Set("proofBounds", TypedOf(env, r.proofBounds));
  o.Set("fetched", TypedOf(env, r.fetched));
  Napi::Object c = Napi::Object::New(env);
  c.Set("nodes", static_cast<double>(r.counters.nodes));
  c.Set("retries", static_cast<double>(r.counters.retries));
  c.Set("misses", static_cast<double>(r.counters.misses));
  c.Set("rejected", static_cast<double>(r.counters.rejected));
  c.Set("rounds", static_cast<double>(r.counters.rounds));
  o.Set("counters", c);
  return o;
}

#ifdef MONSOON_HAVE_VERBS
// A walk over RDMA, whole, off the JS thread: every level's bucket READs, then its node READs.
class WalkRemoteWorker : public Napi::AsyncWorker {
 public:
  WalkRemoteWorker(Napi::Env env, QueuePair* qp, uint8_t* staging, size_t stagingBytes, uint32_t lkey,
                   uint64_t remoteAddr, uint32_t rkey, WalkArgs args)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        qp_(qp),
        source_(*qp, staging, stagingBytes, lkey, remoteAddr, rkey),
        args_(std::move(args)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override { result_ = monsoon_rdma::Walk(source_, args_.geometry, args_.Request()); }

  void OnOK() override {
    qp_->busy = false;
    if (WalkFailed(result_))
      deferred_.Reject(WalkError(Env(), result_, source_.code != nullptr ? source_.code : "RDMA_SYSTEM_ERROR").Value());
    else
      deferred_.Resolve(WalkResultToJs(Env(), result_));
  }

 private:
  Napi::Promise::Deferred deferred_;
  QueuePair* qp_;
  RdmaSource source_;
  WalkArgs args_;
  monsoon_rdma::WalkResult result_;
};
#endif

class RdmaAddon;

// open + fstat + mmap off the JS thread.
class MapWorker : public Napi::AsyncWorker {
 public:
  MapWorker(Napi::Env env, RdmaAddon* addon, std::string path, bool writable, size_t bytes)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        addon_(addon),
        path_(std::move(path)),
        writable_(writable),
        bytes_(bytes) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    int fd = ::open(path_.c_str(), writable_ ? O_RDWR : O_RDONLY);
    if (fd < 0) {
      code_ = errno == ENOENT ? "RDMA_NOT_FOUND" : "RDMA_SYSTEM_ERROR";
      message_ = "open " + path_ + ": " + std::strerror(errno);
      return;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      code_ = "RDMA_SYSTEM_ERROR";
      message_ = "fstat " + path_ + ": " + std::strerror(errno);
      ::close(fd);
      return;
    }
    size_t size = static_cast<size_t>(st.st_size);
    size_t want = bytes_ == 0 ? size : bytes_;
    if (want == 0 || size < want) {
      code_ = "RDMA_REGION_TOO_SMALL";
      message_ = "region file " + path_ + " has " + std::to_string(size) + " B, " +
                 (want == 0 ? std::string("a region needs more than 0 B")
                            : std::to_string(want) + " B are to be mapped");
      ::close(fd);
      return;
    }
    void* addr = ::mmap(nullptr, want, writable_ ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    int err = errno;
    ::close(fd);  // the mapping keeps the file alive
    if (addr == MAP_FAILED) {
      code_ = "RDMA_SYSTEM_ERROR";
      message_ = "mmap " + path_ + ": " + std::strerror(err);
      return;
    }
    addr_ = addr;
    mapped_ = want;
  }

  void OnOK() override;

 private:
  Napi::Promise::Deferred deferred_;
  RdmaAddon* addon_;
  std::string path_;
  bool writable_;
  size_t bytes_;
  const char* code_ = nullptr;
  std::string message_;
  void* addr_ = nullptr;
  size_t mapped_ = 0;
};

#ifdef MONSOON_HAVE_VERBS
class OpenDeviceWorker : public Napi::AsyncWorker {
 public:
  OpenDeviceWorker(Napi::Env env, RdmaAddon* addon, std::string name)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), addon_(addon), name_(std::move(name)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (list == nullptr) {
      code_ = "RDMA_NO_DEVICE";
      message_ = std::string("ibv_get_device_list: ") + std::strerror(errno);
      return;
    }
    ibv_device* dev = nullptr;
    for (int i = 0; i < n; i++)
      if (name_.empty() || name_ == ibv_get_device_name(list[i])) dev = list[i];
    if (dev == nullptr) {
      ibv_free_device_list(list);
      code_ = "RDMA_NO_DEVICE";
      message_ = n == 0 ? "no RDMA device present (ibv_get_device_list lists none)"
                        : "no RDMA device named " + name_;
      return;
    }
    ctx_ = ibv_open_device(dev);
    ibv_free_device_list(list);
    if (ctx_ == nullptr) {
      code_ = "RDMA_SYSTEM_ERROR";
      message_ = std::string("ibv_open_device: ") + std::strerror(errno);
      return;
    }
    pd_ = ibv_alloc_pd(ctx_);
    if (pd_ == nullptr) {
      code_ = "RDMA_SYSTEM_ERROR";
      message_ = std::string("ibv_alloc_pd: ") + std::strerror(errno);
      ibv_close_device(ctx_);
      ctx_ = nullptr;
    }
  }

  void OnOK() override;

 private:
  Napi::Promise::Deferred deferred_;
  RdmaAddon* addon_;
  std::string name_;
  const char* code_ = nullptr;
  std::string message_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
};
#endif

class RdmaAddon : public Napi::Addon<RdmaAddon> {
 public:
  RdmaAddon(Napi::Env env, Napi::Object exports) {
    DefineAddon(exports, {
                             InstanceMethod("mapFile", &RdmaAddon::MapFile),
                             InstanceMethod("unmap", &RdmaAddon::Unmap),
                             InstanceMethod("mappings", &RdmaAddon::Mappings),
                             InstanceMethod("verbsInfo", &RdmaAddon::VerbsInfo),
                             InstanceMethod("openDevice", &RdmaAddon::OpenDevice),
                             InstanceMethod("registerRegion", &RdmaAddon::RegisterRegion),
                             InstanceMethod("closeDevice", &RdmaAddon::CloseDevice),
                             InstanceMethod("createQueuePair", &RdmaAddon::CreateQueuePair),
                             InstanceMethod("connectQueuePair", &RdmaAddon::ConnectQueuePair),
                             InstanceMethod("readBatch", &RdmaAddon::ReadBatch),
                             InstanceMethod("closeQueuePair", &RdmaAddon::CloseQueuePair),
                             InstanceMethod("walkRegion", &RdmaAddon::WalkRegion),
                             InstanceMethod("walkRemote", &RdmaAddon::WalkRemote),
                             InstanceMethod("readNode", &RdmaAddon::ReadNode),
                             InstanceMethod("mallocTrim", &RdmaAddon::MallocTrim),
                         });
    env.AddCleanupHook([this]() { ReleaseAll(); });
  }

  ~RdmaAddon() { ReleaseAll(); }

  uint32_t AddMapping(Napi::Env env, void* addr, size_t bytes) {
    auto m = std::make_unique<Mapping>();
    m->addr = addr;
    m->bytes = bytes;
    // The mapping outlives the ArrayBuffer's finalizer: it is released by unmap() or the
    // cleanup hook, never by the garbage collector (the strong reference keeps it alive).
    Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, addr, bytes, [](Napi::Env, void*) {});
    m->buffer = Napi::Persistent(ab);
    uint32_t h = next_++;
    mappings_[h] = std::move(m);
    return h;
  }

  Napi::Value BufferOf(uint32_t h) { return mappings_[h]->buffer.Value(); }

#ifdef MONSOON_HAVE_VERBS
  uint32_t AddDevice(ibv_context* ctx, ibv_pd* pd) {
    auto d = std::make_unique<Device>();
    d->ctx = ctx;
    d->pd = pd;
    uint32_t h = next_++;
    devices_[h] = std::move(d);
    return h;
  }
#endif

 private:
  static uint32_t HandleArg(const Napi::CallbackInfo& info, size_t i) {
    if (info.Length() <= i || !info[i].IsNumber())
      throw Coded(info.Env(), "RDMA_BAD_HANDLE", "a handle must be a number");
    double d = info[i].As<Napi::Number>().DoubleValue();
    if (d < 0 || d > 4294967295.0 || d != static_cast<double>(static_cast<uint32_t>(d)))
      throw Coded(info.Env(), "RDMA_BAD_HANDLE", "a handle must be a 32-bit unsigned integer");
    return static_cast<uint32_t>(d);
  }

  Napi::Value MapFile(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !info[0].IsString() || !info[1].IsBoolean() || !info[2].IsNumber())
      throw Coded(env, "RDMA_BAD_ARGUMENT", "mapFile(path: string, writable: boolean, bytes: number)");
    double bytes = info[2].As<Napi::Number>().DoubleValue();
    if (bytes < 0 || bytes > 9007199254740991.0 || bytes != static_cast<double>(static_cast<uint64_t>(bytes)))
      throw Coded(env, "RDMA_BAD_ARGUMENT", "bytes must be a non-negative integer");
    auto* w = new MapWorker(env, this, info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::Boolean>().Value(),
                            static_cast<size_t>(bytes));
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
  }

  void Unmap(const Napi::CallbackInfo& info) {
    uint32_t h = HandleArg(info, 0);
    auto it = mappings_.find(h);
    if (it == mappings_.end())
      throw Coded(info.Env(), "RDMA_BAD_HANDLE", "mapping " + std::to_string(h) + " is not open (closed or never mapped)");
    Release(*it->second, true);
    mappings_.erase(it);
  }

  Napi::Value MallocTrim(const Napi::CallbackInfo& info) {
    auto* worker = new TrimWorker(info.Env());
    Napi::Promise p = worker->Promise();
    worker->Queue();
    return p;
  }

  Napi::Value Mappings(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(mappings_.size()));
  }

  Napi::Value VerbsInfo(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    Napi::Array devices = Napi::Array::New(env);
#ifdef MONSOON_HAVE_VERBS
    o.Set("built", true);
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (list == nullptr) {
      o.Set("reason", std::string("ibv_get_device_list: ") + std::strerror(errno));
    } else {
      for (int i = 0; i < n; i++) devices.Set(static_cast<uint32_t>(i), ibv_get_device_name(list[i]));
      ibv_free_device_list(list);
      if (n == 0) o.Set("reason", "no RDMA device present");
    }
#else
    o.Set("built", false);
    o.Set("reason", "the addon was built without the verbs headers (libibverbs-dev, librdmacm-dev)");
#endif
    o.Set("devices", devices);
    return o;
  }

  Napi::Value OpenDevice(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString())
      throw Coded(env, "RDMA_BAD_ARGUMENT", "openDevice(name: string) (empty: the first device)");
#ifdef MONSOON_HAVE_VERBS
    auto* w = new OpenDeviceWorker(env, this, info[0].As<Napi::String>().Utf8Value());
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
#else
    throw Coded(env, "RDMA_NO_VERBS", "the addon was built without the verbs headers (libibverbs-dev, librdmacm-dev)");
#endif
  }

  Napi::Value RegisterRegion(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
#ifdef MONSOON_HAVE_VERBS
    uint32_t dh = HandleArg(info, 0);
    uint32_t mh = HandleArg(info, 1);
    auto d = devices_.find(dh);
    if (d == devices_.end()) throw Coded(env, "RDMA_BAD_HANDLE", "device " + std::to_string(dh) + " is not open");
    auto m = mappings_.find(mh);
    if (m == mappings_.end()) throw Coded(env, "RDMA_BAD_HANDLE", "mapping " + std::to_string(mh) + " is not open");
    Mapping& mp = *m->second;
    if (mp.mr != nullptr) throw Coded(env, "RDMA_BAD_ARGUMENT", "mapping " + std::to_string(mh) + " is registered already");
    mp.mr = ibv_reg_mr(d->second->pd, mp.addr, mp.bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    if (mp.mr == nullptr) throw Coded(env, "RDMA_SYSTEM_ERROR", std::string("ibv_reg_mr: ") + std::strerror(errno));
    Napi::Object o = Napi::Object::New(env);
    o.Set("rkey", Napi::Number::New(env, mp.mr->rkey));
    o.Set("lkey", Napi::Number::New(env, mp.mr->lkey));
    o.Set("addr", Napi::BigInt::New(env, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(mp.addr))));
    o.Set("bytes", Napi::Number::New(env, static_cast<double>(mp.bytes)));
    return o;
#else
    throw Coded(env, "RDMA_NO_VERBS", "the addon was built without the verbs headers (libibverbs-dev, librdmacm-dev)");
#endif
  }

  void CloseDevice(const Napi::CallbackInfo& info) {
#ifdef MONSOON_HAVE_VERBS
    uint32_t h = HandleArg(info, 0);
    auto it = devices_.find(h);
    if (it == devices_.end()) throw Coded(info.Env(), "RDMA_BAD_HANDLE", "device " + std::to_string(h) + " is not open");
    // Its queue pairs and the regions registered with it go first (not while a batch is in flight).
    for (auto& [qh, q] : queuePairs_) {
      (void)qh;
      if (q->device == h && q->busy)
        throw Coded(info.Env(), "RDMA_BAD_ARGUMENT", "a batch is in flight on one of this device's queue pairs");
    }
    for (auto q = queuePairs_.begin(); q != queuePairs_.end();) {
      if (q->second->device == h) {
        ReleaseQueuePair(*q->second);
        q = queuePairs_.erase(q);
      } else {
        ++q;
      }
    }
    for (auto& [mh, m] : mappings_) {
      (void)mh;
      if (m->mr != nullptr && m->mr->pd == it->second->pd) {
        ibv_dereg_mr(m->mr);
        m->mr = nullptr;
      }
    }
    ReleaseDevice(*it->second);
    devices_.erase(it);
#else
    throw Coded(info.Env(), "RDMA_NO_VERBS", "the addon was built without the verbs headers (libibverbs-dev, librdmacm-dev)");
#endif
  }

  static Napi::Error NoVerbs(Napi::Env env) {
    return Coded(env, "RDMA_NO_VERBS", "the addon was built without the verbs headers (libibverbs-dev, librdmacm-dev)");
  }

  // createQueuePair(device) -> { handle, qpn, lid, gid (16 bytes), psn }: an RC queue pair in
  // INIT on port 1, remote reads allowed; its numbers go to the peer (over gRPC) to connect.
  Napi::Value CreateQueuePair(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
#ifdef MONSOON_HAVE_VERBS
    uint32_t dh = HandleArg(info, 0);
    auto d = devices_.find(dh);
    if (d == devices_.end()) throw Coded(env, "RDMA_BAD_HANDLE", "device " + std::to_string(dh) + " is not open");
    Device& dev = *d->second;
    auto q = std::make_unique<QueuePair>();
    q->device = dh;
    q->cq = ibv_create_cq(dev.ctx, 4096, nullptr, nullptr, 0);
    if (q->cq == nullptr) throw Coded(env, "RDMA_SYSTEM_ERROR", std::string("ibv_create_cq: ") + std::strerror(errno));
    ibv_qp_init_attr init;
    std::memset(&init, 0, sizeof init);
    init.send_cq = q->cq;
    init.recv_cq = q->cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 4096;
    init.cap.max_recv_wr = 1;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    q->qp = ibv_create_qp(dev.pd, &init);
    if (q->qp == nullptr) {
      int err = errno;
      ibv_destroy_cq(q->cq);
      throw Coded(env, "RDMA_SYSTEM_ERROR", std::string("ibv_create_qp: ") + std::strerror(err));
    }
    ibv_qp_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = 1;
    attr.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
    int rc = ibv_modify_qp(q->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    ibv_port_attr port;
    ibv_gid gid;
    if (rc == 0) rc = ibv_query_port(dev.ctx, 1, &port);
    if (rc == 0) rc = ibv_query_gid(dev.ctx, 1, 0, &gid);
    if (rc != 0) {
      ReleaseQueuePair(*q);
      throw Coded(env, "RDMA_SYSTEM_ERROR", std::string("queue pair to INIT: ") + std::strerror(rc));
    }
    uint32_t h = next_++;
    Napi::Object o = Napi::Object::New(env);
    o.Set("handle", Napi::Number::New(env, h));
    o.Set("qpn", Napi::Number::New(env, q->qp->qp_num));
    o.Set("lid", Napi::Number::New(env, port.lid));
    o.Set("gid", Napi::Buffer<uint8_t>::Copy(env, gid.raw, 16));
    o.Set("psn", Napi::Number::New(env, q->qp->qp_num & 0xffffff));
    queuePairs_[h] = std::move(q);
    return o;
#else
    (void)info;
    throw NoVerbs(env);
#endif
  }

  // connectQueuePair(qp, { qpn, lid, gid, psn }, localPsn): INIT -> RTR -> RTS towards the peer.
  void ConnectQueuePair(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
#ifdef MONSOON_HAVE_VERBS
    QueuePair& q = QueuePairArg(info, 0);
    if (info.Length() < 3 || !info[1].IsObject() || !info[2].IsNumber())
      throw Coded(env, "RDMA_BAD_ARGUMENT", "connectQueuePair(qp, { qpn, lid, gid, psn }, localPsn)");
    Napi::Object peer = info[1].As<Napi::Object>();
    if (!peer.Get("qpn").IsNumber() || !peer.Get("lid").IsNumber() || !peer.Get("psn").IsNumber() ||
        !peer.Get("gid").IsBuffer() || peer.Get("gid").As<Napi::Buffer<uint8_t>>().Length() != 16)
      throw Coded(env, "RDMA_BAD_ARGUMENT", "the peer needs qpn, lid and psn numbers and a 16-byte gid");
    ibv_qp_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = IBV_MTU_1024;
    attr.dest_qp_num = peer.Get("qpn").As<Napi::Number>().Uint32Value();
    attr.rq_psn = peer.Get("psn").As<Napi::Number>().Uint32Value() & 0xffffff;
    attr.max_dest_rd_atomic = 16;
    attr.min_rnr_timer = 12;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.dlid = static_cast<uint16_t>(peer.Get("lid").As<Napi::Number>().Uint32Value());
    attr.ah_attr.port_num = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, peer.Get("gid").As<Napi::Buffer<uint8_t>>().Data(), 16);
    attr.ah_attr.grh.hop_limit = 1;
    attr.ah_attr.grh.sgid_index = 0;
    int rc = ibv_modify_qp(q.qp, &attr,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc != 0) throw Coded(env, "RDMA_SYSTEM_ERROR", std::string("queue pair to RTR: ") + std::strerror(rc));
    std::memset(&attr, 0, sizeof attr);
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = 14;
    attr.retry_cnt = 7;
    attr.rnr_retry = 7;
    attr.sq_psn = info[2].As<Napi::Number>().Uint32Value() & 0xffffff;
    attr.max_rd_atomic = 16;
    rc = ibv_modify_qp(q.qp, &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                           IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc != 0) throw Coded(env, "RDMA_SYSTEM_ERROR", std::string("queue pair to RTS: ") + std::strerror(rc));
#else
    (void)info;
    throw NoVerbs(env);
#endif
  }

  // readBatch(qp, localMapping, remoteAddr: bigint, rkey, ops: Float64Array [remoteOffset, length,
  // localOffset]…) -> Promise<number of READs>: one chain of READs into a registered local mapping.
  Napi::Value ReadBatch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
#ifdef MONSOON_HAVE_VERBS
    QueuePair& q = QueuePairArg(info, 0);
    Mapping& local = RegisteredMappingArg(info, 1);
    if (info.Length() < 5 || !info[2].IsBigInt() || !info[3].IsNumber() || !info[4].IsTypedArray() ||
        info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
      throw Coded(env, "RDMA_BAD_ARGUMENT", "readBatch(qp, mapping, remoteAddr: bigint, rkey, ops: Float64Array)");
    bool lossless = false;
    uint64_t base = info[2].As<Napi::BigInt>().Uint64Value(&lossless);
    uint32_t rkey = info[3].As<Napi::Number>().Uint32Value();
    Napi::Float64Array ops = info[4].As<Napi::Float64Array>();
    if (ops.ElementLength() == 0 || ops.ElementLength() % 3 != 0 || ops.ElementLength() / 3 > 4096)
      throw Coded(env, "RDMA_BAD_ARGUMENT", "ops holds 1 to 4096 triples [remoteOffset, length, localOffset]");
    if (q.busy) throw Coded(env, "RDMA_BAD_ARGUMENT", "a batch is already in flight on this queue pair");
    size_t n = ops.ElementLength() / 3;
    std::vector<ibv_sge> sges(n);
    std::vector<uint64_t> remote(n);
    for (size_t i = 0; i < n; i++) {
      double ro = ops[3 * i], len = ops[3 * i + 1], lo = ops[3 * i + 2];
      if (ro < 0 || len <= 0 || lo < 0 || len > 4294967295.0 || lo + len > static_cast<double>(local.bytes))
        throw Coded(env, "RDMA_REGION_TOO_SMALL",
                    "READ " + std::to_string(i) + " does not fit the local mapping of " + std::to_string(local.bytes) + " B");
      sges[i].addr = reinterpret_cast<uintptr_t>(local.addr) + static_cast<uint64_t>(lo);
      sges[i].length = static_cast<uint32_t>(len);
      sges[i].lkey = local.mr->lkey;
      remote[i] = base + static_cast<uint64_t>(ro);
    }
    q.busy = true;
    auto* w = new ReadBatchWorker(env, &q, std::move(sges), std::move(remote), rkey);
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
#else
    (void)info;
    throw NoVerbs(env);
#endif
  }

  // walkRegion(region: Uint8Array, geometry, roots, keys, rootOf, fetch, maxTries): a verified
  // walk of a region in this process's memory (a mapping's bytes), on the JS thread: it reads
  // memory, never blocks. Throws RDMA_BAD_REGION when a verified node is malformed.
  Napi::Value WalkRegion(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsTypedArray() ||
        info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      throw Coded(env, "RDMA_BAD_ARGUMENT", std::string("walkRegion(region: Uint8Array, ...") + kWalkUsage);
    Napi::Uint8Array region = info[0].As<Napi::Uint8Array>();
    if (region.ElementLength() == 0)
      throw Coded(env, "RDMA_CLOSED", "walkRegion: the region's bytes are empty (its mapping is closed)");
    WalkArgs a = ParseWalkArgs(info, 1, region.ElementLength(), "walkRegion(region, ...");
    monsoon_rdma::MemorySource source(region.Data(), region.ElementLength());
    monsoon_rdma::WalkResult r = monsoon_rdma::Walk(source, a.geometry, a.Request());
    if (WalkFailed(r)) throw WalkError(env, r, "RDMA_BAD_REGION");
    return WalkResultToJs(env, r);
  }

  // readNode(region: Uint8Array, geometry: Float64Array, hash: Uint8Array (32 B), maxTries, out:
  // Uint8Array) -> number: one node by hash, verified, copied into `out`; its length, -1 when it
  // can't be had, or -(length + 2) when `out` is too short for it. Writing into the caller's
  // buffer keeps a read free of a per-call JS allocation made here (an addon-made buffer costs
  // more than the keccak).
  Napi::Value ReadNode(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto isType = [&](size_t i, napi_typedarray_type t) {
      return info.Length() > i && info[i].IsTypedArray() && info[i].As<Napi::TypedArray>().TypedArrayType() == t;
    };
    if (!isType(0, napi_uint8_array) || !isType(1, napi_float64_array) || !isType(2, napi_uint8_array) ||
        info.Length() < 5 || !info[3].IsNumber() || !isType(4, napi_uint8_array))
      throw Coded(env, "RDMA_BAD_ARGUMENT",
                  "readNode(region: Uint8Array, geometry: Float64Array, hash: Uint8Array, maxTries: number, out: "
                  "Uint8Array)");
    Napi::Uint8Array region = info[0].As<Napi::Uint8Array>();
    Napi::Float64Array ga = info[1].As<Napi::Float64Array>();
    Napi::Uint8Array hash = info[2].As<Napi::Uint8Array>();
    uint32_t tries = info[3].As<Napi::Number>().Uint32Value();
    Napi::Uint8Array out = info[4].As<Napi::Uint8Array>();
    if (hash.ElementLength() != 32 || tries < 1 || tries > 16)
      throw Coded(env, "RDMA_BAD_ARGUMENT", "readNode: a hash is 32 bytes, maxTries 1 to 16");
    if (region.ElementLength() == 0)
      throw Coded(env, "RDMA_CLOSED", "readNode: the region's bytes are empty (its mapping is closed)");
    monsoon_rdma::Geometry g = GeometryArg(ga, region.ElementLength(), "readNode");
    return Napi::Number::New(env, static_cast<double>(monsoon_rdma::ReadNode(region.Data(), g, hash.Data(), tries,
                                                                             out.Data(), out.ElementLength())));
  }

  // walkRemote(qp, staging, remoteAddr: bigint, rkey, geometry, roots, keys, rootOf, fetch,
  // maxTries) -> Promise: the same walk over RDMA READs from the peer's registered region into
  // the registered local mapping `staging`, run whole off the JS thread (one doorbell per batch
  // of READs: two per level). One walk or readBatch in flight per queue pair.
  Napi::Value WalkRemote(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
#ifdef MONSOON_HAVE_VERBS
    QueuePair& q = QueuePairArg(info, 0);
    Mapping& local = RegisteredMappingArg(info, 1);
    if (info.Length() < 4 || !info[2].IsBigInt() || !info[3].IsNumber())
      throw Coded(env, "RDMA_BAD_ARGUMENT", "walkRemote(qp, staging, remoteAddr: bigint, rkey: number, ...)");
    bool lossless = false;
    uint64_t base = info[2].As<Napi::BigInt>().Uint64Value(&lossless);
    uint32_t rkey = info[3].As<Napi::Number>().Uint32Value();
    WalkArgs a = ParseWalkArgs(info, 4, 0, "walkRemote(qp, staging, remoteAddr, rkey, ...");
    if (q.busy) throw Coded(env, "RDMA_BAD_ARGUMENT", "a batch is already in flight on this queue pair");
    q.busy = true;
    auto* w = new WalkRemoteWorker(env, &q, static_cast<uint8_t*>(local.addr), local.bytes, local.mr->lkey, base,
                                   rkey, std::move(a));
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
#else
    (void)info;
    throw NoVerbs(env);
#endif
  }

  void CloseQueuePair(const Napi::CallbackInfo& info) {
#ifdef MONSOON_HAVE_VERBS
    uint32_t h = HandleArg(info, 0);
    auto it = queuePairs_.find(h);
    if (it == queuePairs_.end())
      throw Coded(info.Env(), "RDMA_BAD_HANDLE", "queue pair " + std::to_string(h) + " is not open");
    if (it->second->busy) throw Coded(info.Env(), "RDMA_BAD_ARGUMENT", "a batch is in flight on this queue pair");
    ReleaseQueuePair(*it->second);
    queuePairs_.erase(it);
#else
    throw NoVerbs(info.Env());
#endif
  }

#ifdef MONSOON_HAVE_VERBS
  // The mapping named by info[i], which must be registered with a device (READs land in it).
  Mapping& RegisteredMappingArg(const Napi::CallbackInfo& info, size_t i) {
    uint32_t mh = HandleArg(info, i);
    auto m = mappings_.find(mh);
    if (m == mappings_.end())
      throw Coded(info.Env(), "RDMA_BAD_HANDLE", "mapping " + std::to_string(mh) + " is not open");
    if (m->second->mr == nullptr)
      throw Coded(info.Env(), "RDMA_BAD_ARGUMENT", "the local mapping must be registered with the device first");
    return *m->second;
  }

  QueuePair& QueuePairArg(const Napi::CallbackInfo& info, size_t i) {
    uint32_t h = HandleArg(info, i);
    auto it = queuePairs_.find(h);
    if (it == queuePairs_.end())
      throw Coded(info.Env(), "RDMA_BAD_HANDLE", "queue pair " + std::to_string(h) + " is not open (closed or never created)");
    return *it->second;
  }

  static void ReleaseQueuePair(QueuePair& q) {
    if (q.qp != nullptr) ibv_destroy_qp(q.qp);
    if (q.cq != nullptr) ibv_destroy_cq(q.cq);
    q.qp = nullptr;
    q.cq = nullptr;
  }
#endif

  void Release(Mapping& m, bool detach) {
#ifdef MONSOON_HAVE_VERBS
    if (m.mr != nullptr) {
      ibv_dereg_mr(m.mr);
      m.mr = nullptr;
    }
#endif
    if (detach && !m.buffer.IsEmpty()) {
      Napi::ArrayBuffer ab = m.buffer.Value();
      if (!ab.IsDetached()) ab.Detach();
    }
    m.buffer.Reset();
    if (m.addr != nullptr) ::munmap(m.addr, m.bytes);
    m.addr = nullptr;
  }

#ifdef MONSOON_HAVE_VERBS
  static void ReleaseDevice(Device& d) {
    if (d.pd != nullptr) ibv_dealloc_pd(d.pd);
    if (d.ctx != nullptr) ibv_close_device(d.ctx);
    d.pd = nullptr;
    d.ctx = nullptr;
  }
#endif

  void ReleaseAll() {
    // At environment teardown JS values can't be touched: just drop the memory.
    for (auto& [h, m] : mappings_) {
      (void)h;
#ifdef MONSOON_HAVE_VERBS
      if (m->mr != nullptr) ibv_dereg_mr(m->mr);
      m->mr = nullptr;
#endif
      if (m->addr != nullptr) ::munmap(m->addr, m->bytes);
      m->addr = nullptr;
    }
    mappings_.clear();
#ifdef MONSOON_HAVE_VERBS
    for (auto& [h, q] : queuePairs_) {
      (void)h;
      ReleaseQueuePair(*q);
    }
    queuePairs_.clear();
    for (auto& [h, d] : devices_) {
      (void)h;
      ReleaseDevice(*d);
    }
    devices_.clear();
#endif
  }

  uint32_t next_ = 1;
  std::map<uint32_t, std::unique_ptr<Mapping>> mappings_;
#ifdef MONSOON_HAVE_VERBS
  std::map<uint32_t, std::unique_ptr<Device>> devices_;
  std::map<uint32_t, std::unique_ptr<QueuePair>> queuePairs_;
#endif
};

void MapWorker::OnOK() {
  Napi::Env env = Env();
  if (code_ != nullptr) {
    deferred_.Reject(Coded(env, code_, message_).Value());
    return;
  }
  uint32_t h = addon_->AddMapping(env, addr_, mapped_);
  Napi::Object o = Napi::Object::New(env);
  o.Set("handle", Napi::Number::New(env, h));
  o.Set("buffer", addon_->BufferOf(h));
  deferred_.Resolve(o);
}

#ifdef MONSOON_HAVE_VERBS
void OpenDeviceWorker::OnOK() {
  Napi::Env env = Env();
  if (code_ != nullptr) {
    deferred_.Reject(Coded(env, code_, message_).Value());
    return;
  }
  deferred_.Resolve(Napi::Number::New(env, addon_->AddDevice(ctx_, pd_)));
}
#endif

}  // namespace

NODE_API_ADDON(RdmaAddon)
