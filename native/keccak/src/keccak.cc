// Keccak-256 for Node.js: single, batched, packed and Merkle-tree calls.
//
// This is Ethereum's Keccak-256: rate 136 bytes and the ORIGINAL Keccak padding
// (0x01 ... 0x80), not SHA3-256 (0x06 ... 0x80). The batched entry points exist
// because, for 32..532-byte inputs, crossing the JS/C++ boundary and allocating a
// Buffer per hash costs as much as the permutation itself; hashing many inputs per
// call amortises both.
//
// Every entry point validates its arguments completely before it reads or writes
// anything, and throws a TypeError/RangeError whose message matches the pure-JS
// backend (src/jsKeccak.ts) word for word.

#include <napi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "keccak256.h"

namespace {

using monsoon_keccak::Keccak256;
using monsoon_keccak::kDigest;
using monsoon_keccak::Keccak256Many;

// Keccak-256 of count inputs packed in data (input i is data[off[i], off[i + 1])) into
// out[32i, 32i + 32): Keccak256Many, four at a time where the CPU allows.
template <typename Offset>
void HashPacked(const uint8_t* data, const Offset* off, size_t count, uint8_t* out) {
  thread_local std::vector<const uint8_t*> in;
  thread_local std::vector<size_t> len;
  thread_local std::vector<uint8_t*> dst;
  in.resize(count);
  len.resize(count);
  dst.resize(count);
  for (size_t i = 0; i < count; ++i) {
    in[i] = data + off[i];
    len[i] = off[i + 1] - off[i];
    dst[i] = out + kDigest * i;
  }
  Keccak256Many(in.data(), len.data(), dst.data(), count);
}

// keccak256Tree's work, as if one input at a time in index order: input j's digest goes to
// out[32j, 32j + 32) and, when patch[j] >= 0, into data at patch[j], inside a later input
// (validated). Runs of up to four adjacent inputs none of which patches another of the run,
// hashed together, then their patches written.
void HashTreeInOrder(uint8_t* data, const uint32_t* off, const int32_t* patch, size_t count, uint8_t* out) {
  for (size_t i = 0; i < count;) {
    size_t n = 1;
    while (n < 4 && i + n < count) {
      const int64_t lo = off[i + n], hi = off[i + n + 1];
      bool patched = false;
      for (size_t j = i; j < i + n; ++j) patched |= patch[j] >= lo && patch[j] < hi;
      if (patched) break;
      n++;
    }
    HashPacked(data, off + i, n, out + kDigest * i);
    for (size_t j = i; j < i + n; ++j)
      if (patch[j] >= 0) std::memcpy(data + patch[j], out + kDigest * j, kDigest);
    i += n;
  }
}

// keccak256Tree's work (see HashTreeInOrder), by height: an input no other patches is height 0,
// any other one more than its highest child's, and all inputs of one height go in one
// Keccak256Many call (none of them patches another). A post-order tree's leaves, and its nodes
// of a level, are many inputs of one length, which four-way hashing needs; its adjacent inputs
// are mostly a child and its parent, so runs of them hashed mostly one at a time. The result
// is the in-order one as long as each input's patches, in index order, are at increasing
// non-overlapping places (a trie node's children's holes are); when they are not, the order
// writes land in could matter, and the inputs are hashed in order instead.
void HashTree(uint8_t* data, const uint32_t* off, const int32_t* patch, size_t count, uint8_t* out) {
  thread_local std::vector<uint32_t> height;
  thread_local std::vector<uint32_t> start;
  thread_local std::vector<uint32_t> order;
  thread_local std::vector<const uint8_t*> in;
  thread_local std::vector<size_t> len;
  thread_local std::vector<uint8_t*> dst;
  thread_local std::vector<uint32_t> nextFree;  // per input: where the next patch into it may start
  height.assign(count, 0);
  nextFree.assign(count, 0);
  uint32_t top = 0;
  for (size_t j = 0; j < count; ++j) {
    if (patch[j] < 0) continue;
    // The input holding byte patch[j]: the last p with off[p] <= patch[j] (validated: p > j).
    const uint32_t at = static_cast<uint32_t>(patch[j]);
    const size_t p = static_cast<size_t>(std::upper_bound(off + j + 1, off + count, at) - off) - 1;
    if (at < nextFree[p]) {
      HashTreeInOrder(data, off, patch, count, out);
      return;
    }
    nextFree[p] = at + kDigest;
    if (height[j] + 1 > height[p]) height[p] = height[j] + 1;
    if (height[p] > top) top = height[p];
  }
  // Counting sort by height; within one height the inputs keep their order.
  start.assign(top + 2, 0);
  for (size_t j = 0; j < count; ++j) start[height[j] + 1]++;
  for (uint32_t h = 0; h <= top; ++h) start[h + 1] += start[h];
  order.resize(count);
  in.resize(count);
  len.resize(count);
  dst.resize(count);
  {
    thread_local std::vector<uint32_t> next;
    next.assign(start.begin(), start.end() - 1);
    for (size_t j = 0; j < count; ++j) order[next[height[j]]++] = static_cast<uint32_t>(j);
  }
  for (uint32_t h = 0; h <= top; ++h) {
    const size_t a = start[h], b = start[h + 1];
    for (size_t k = a; k < b; ++k) {
      const uint32_t j = order[k];
      in[k] = data + off[j];
      len[k] = off[j + 1] - off[j];
      dst[k] = out + kDigest * j;
    }
    Keccak256Many(in.data() + a, len.data() + a, dst.data() + a, b - a);
    for (size_t k = a; k < b; ++k) {
      const uint32_t j = order[k];
      if (patch[j] >= 0) std::memcpy(data + patch[j], out + kDigest * j, kDigest);
    }
  }
}

// ---- argument handling ----------------------------------------------------------

const char* TypedArrayName(napi_typedarray_type type) {
  switch (type) {
    case napi_int8_array: return "Int8Array";
    case napi_uint8_array: return "Uint8Array";
    case napi_uint8_clamped_array: return "Uint8ClampedArray";
    case napi_int16_array: return "Int16Array";
    case napi_uint16_array: return "Uint16Array";
    case napi_int32_array: return "Int32Array";
    case napi_uint32_array: return "Uint32Array";
    case napi_float32_array: return "Float32Array";
    case napi_float64_array: return "Float64Array";
    case napi_bigint64_array: return "BigInt64Array";
    case napi_biguint64_array: return "BigUint64Array";
    default: return "TypedArray";
  }
}

// What an argument is, for error messages; mirrors describe() in src/validate.ts.
std::string Describe(const Napi::Value& v) {
  switch (v.Type()) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_boolean: return "boolean";
    case napi_number: return "number";
    case napi_string: return "string";
    case napi_symbol: return "symbol";
    case napi_function: return "function";
    case napi_bigint: return "bigint";
    default: break;
  }
  if (v.IsArray()) return "Array";
  if (v.IsTypedArray()) return TypedArrayName(v.As<Napi::TypedArray>().TypedArrayType());
  if (v.IsDataView()) return "DataView";
  if (v.IsArrayBuffer()) return "ArrayBuffer";
  return "object";
}

template <typename T>
struct View {
  T* data = nullptr;
  size_t length = 0;  // in elements
};

// Reads a typed array of exactly `type` without throwing; false if `v` is anything else.
template <typename T>
bool TryView(napi_env env, napi_value v, napi_typedarray_type type, View<T>* view) {
  bool is = false;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return false;
  napi_typedarray_type actual;
  size_t length = 0;
  void* data = nullptr;
  if (napi_get_typedarray_info(env, v, &actual, &length, &data, nullptr, nullptr) != napi_ok) return false;
  if (actual != type) return false;
  view->data = static_cast<T*>(data);
  view->length = length;
  return true;
}

[[noreturn]] void ThrowType(const Napi::Env& env, const std::string& message) {
  throw Napi::TypeError::New(env, message);
}

[[noreturn]] void ThrowRange(const Napi::Env& env, const std::string& message) {
  throw Napi::RangeError::New(env, message);
}

template <typename T>
View<T> RequireView(const Napi::Env& env, const Napi::Value& v, napi_typedarray_type type, const std::string& fn,
                    const char* name) {
  View<T> view;
  if (!TryView(env, v, type, &view)) {
    const char* expected = TypedArrayName(type);
    const char* article = expected[0] == 'I' ? "an" : "a";
    ThrowType(env, fn + ": " + name + " must be " + article + " " + expected + ", got " + Describe(v));
  }
  return view;
}

// The arguments of keccak256Packed / keccak256Tree, fully validated.
struct PackedCall {
  View<uint8_t> data;
  View<uint32_t> offsets;
  View<int32_t> patch;  // empty for keccak256Packed
  size_t count = 0;
  uint8_t* out = nullptr;
  Napi::Value outValue;
};

// keccak256Packed(data, offsets, count, out?) and keccak256Tree(data, offsets, patch, count, out?).
// The order of checks and the messages are the same as in src/validate.ts.
PackedCall ParsePackedCall(const Napi::CallbackInfo& info, const std::string& fn, bool tree) {
  Napi::Env env = info.Env();
  PackedCall call;
  const size_t countArg = tree ? 3 : 2;
  const size_t outArg = countArg + 1;

  call.data = RequireView<uint8_t>(env, info[0], napi_uint8_array, fn, "data");
  call.offsets = RequireView<uint32_t>(env, info[1], napi_uint32_array, fn, "offsets");
  if (tree) call.patch = RequireView<int32_t>(env, info[2], napi_int32_array, fn, "patch");

  const Napi::Value countValue = info[countArg];
  if (!countValue.IsNumber()) ThrowType(env, fn + ": count must be a non-negative integer, got " + Describe(countValue));
  const double c = countValue.As<Napi::Number>().DoubleValue();
  if (!(c >= 0 && c <= 9007199254740991.0 && static_cast<double>(static_cast<uint64_t>(c)) == c)) {
    ThrowRange(env, fn + ": count must be a non-negative integer, got " + countValue.ToString().Utf8Value());
  }
  if (c + 1 > static_cast<double>(call.offsets.length)) {
    ThrowRange(env, fn + ": offsets must have count + 1 = " + std::to_string(static_cast<uint64_t>(c) + 1) +
                        " entries, got " + std::to_string(call.offsets.length));
  }
  const size_t count = static_cast<size_t>(c);  // < offsets.length, so it fits
  call.count = count;
  if (tree && call.patch.length < count) {
    ThrowRange(env, fn + ": patch must have count = " + std::to_string(count) + " entries, got " +
                        std::to_string(call.patch.length));
  }

  const size_t outBytes = count * kDigest;
  const Napi::Value outValue = info[outArg];
  if (!outValue.IsUndefined()) {
    const View<uint8_t> out = RequireView<uint8_t>(env, outValue, napi_uint8_array, fn, "out");
    if (out.length < outBytes) {
      ThrowRange(env, fn + ": out must hold count * 32 = " + std::to_string(outBytes) + " bytes, got " +
                          std::to_string(out.length));
    }
    const uintptr_t o = reinterpret_cast<uintptr_t>(out.data);
    const uintptr_t d = reinterpret_cast<uintptr_t>(call.data.data);
    if (outBytes > 0 && call.data.length > 0 && o < d + call.data.length && d < o + outBytes) {
      ThrowRange(env, fn + ": out must not overlap data");
    }
    call.out = out.data;
    call.outValue = outValue;
  }

  const uint32_t* off = call.offsets.data;
  for (size_t i = 0; i < count; ++i) {
    if (off[i] > off[i + 1]) {
      ThrowRange(env, fn + ": offsets must be non-decreasing, got offsets[" + std::to_string(i) +
                          "] = " + std::to_string(off[i]) + " > offsets[" + std::to_string(i + 1) +
                          "] = " + std::to_string(off[i + 1]));
    }
  }
  if (off[count] > call.data.length) {
    ThrowRange(env, fn + ": offsets[" + std::to_string(count) + "] = " + std::to_string(off[count]) +
                        " is past the end of data (" + std::to_string(call.data.length) + " bytes)");
  }

  if (tree) {
    for (size_t i = 0; i < count; ++i) {
      const int64_t p = call.patch.data[i];
      if (p < 0) continue;
      const std::string at = fn + ": patch[" + std::to_string(i) + "] = " + std::to_string(p);
      if (static_cast<uint64_t>(p) + kDigest > call.data.length) {
        ThrowRange(env, at + " puts a 32-byte digest past the end of data (" + std::to_string(call.data.length) +
                            " bytes)");
      }
      // The input holding byte p: the last j < count with offsets[j] <= p.
      const uint32_t* it = std::upper_bound(off, off + count, static_cast<uint64_t>(p),
                                            [](uint64_t value, uint32_t o) { return value < o; });
      const size_t j = static_cast<size_t>(it - off);  // one past the input
      if (j == 0 || static_cast<uint64_t>(off[j]) < static_cast<uint64_t>(p) + kDigest) {
        ThrowRange(env, at + ": bytes " + std::to_string(p) + ".." + std::to_string(p + 32) +
                            " are not inside a single input");
      }
      if (j - 1 <= i) {
        ThrowRange(env, at + " points into input " + std::to_string(j - 1) +
                            ", but a digest may only be patched into a later input (index > " +
                            std::to_string(i) + ")");
      }
    }
  }

  if (call.out == nullptr) {
    Napi::Buffer<uint8_t> out = Napi::Buffer<uint8_t>::New(env, outBytes);
    call.out = out.Data();
    call.outValue = out;
  }
  return call;
}

// Hashes inputs already copied off the JS heap, on a libuv worker thread. The result
// Buffer is allocated on the JS thread up front and kept alive by a reference; its
// backing store does not move, so Execute() writes the digests straight into it.
class BatchWorker final : public Napi::AsyncWorker {
 public:
  BatchWorker(Napi::Env env, std::vector<uint8_t> bytes, std::vector<size_t> offsets, Napi::Buffer<uint8_t> out)
      : Napi::AsyncWorker(env, "keccak256BatchAsync"),
        deferred_(Napi::Promise::Deferred::New(env)),
        bytes_(std::move(bytes)),
        offsets_(std::move(offsets)),
        digests_(out.Data()),
        out_(Napi::Persistent(out)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    HashPacked(bytes_.data(), offsets_.data(), offsets_.size() - 1, digests_);
  }

  void OnOK() override { deferred_.Resolve(out_.Value()); }

  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::vector<uint8_t> bytes_;
  std::vector<size_t> offsets_;  // n + 1 entries into bytes_
  uint8_t* digests_;
  Napi::Reference<Napi::Buffer<uint8_t>> out_;
};

// How many array elements to read per handle scope in the batch calls, so a batch of
// millions does not pile up millions of handles.
constexpr uint32_t kHandleChunk = 4096;

Napi::Array RequireInputs(const Napi::Env& env, const Napi::Value& v, const char* fn) {
  if (!v.IsArray()) {
    ThrowType(env, std::string(fn) + ": inputs must be an Array of Uint8Array, got " + Describe(v));
  }
  return v.As<Napi::Array>();
}

// inputs[i] as bytes; throws a TypeError naming the index if it is not a Uint8Array.
View<uint8_t> RequireInput(const Napi::Env& env, const Napi::Array& inputs, uint32_t i, const char* fn) {
  napi_value element;
  if (napi_get_element(env, inputs, i, &element) != napi_ok) throw Napi::Error::New(env);
  View<uint8_t> view;
  if (!TryView(env, element, napi_uint8_array, &view)) {
    ThrowType(env, std::string(fn) + ": inputs[" + std::to_string(i) + "] must be a Uint8Array, got " +
                       Describe(Napi::Value(env, element)));
  }
  return view;
}

// Per-environment instance: one per main thread or worker_threads Worker that loads the
// addon. It holds no state of its own (every call is self-contained), so there is
// nothing to release at environment teardown beyond what node-addon-api does.
class KeccakAddon final : public Napi::Addon<KeccakAddon> {
 public:
  KeccakAddon(Napi::Env /*env*/, Napi::Object exports) {
    DefineAddon(exports, {
                             InstanceMethod("keccak256", &KeccakAddon::Hash, napi_enumerable),
                             InstanceMethod("keccak256Batch", &KeccakAddon::Batch, napi_enumerable),
                             InstanceMethod("keccak256Packed", &KeccakAddon::Packed, napi_enumerable),
                             InstanceMethod("keccak256Tree", &KeccakAddon::Tree, napi_enumerable),
                             InstanceMethod("keccak256BatchAsync", &KeccakAddon::BatchAsync, napi_enumerable),
                         });
  }

 private:
  Napi::Value Hash(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const View<uint8_t> data = RequireView<uint8_t>(env, info[0], napi_uint8_array, "keccak256", "data");
    Napi::Buffer<uint8_t> out = Napi::Buffer<uint8_t>::New(env, kDigest);
    Keccak256(data.data, data.length, out.Data());
    return out;
  }

  Napi::Value Batch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const Napi::Array inputs = RequireInputs(env, info[0], "keccak256Batch");
    const uint32_t n = inputs.Length();
    Napi::Buffer<uint8_t> out = Napi::Buffer<uint8_t>::New(env, static_cast<size_t>(n) * kDigest);
    uint8_t* digests = out.Data();
    // Each input is copied as soon as it is read (a getter on a later element cannot
    // invalidate a pointer we still hold), then a chunk is hashed at once, four at a time.
    thread_local std::vector<uint8_t> bytes;
    thread_local std::vector<size_t> offsets;
    for (uint32_t base = 0; base < n; base += kHandleChunk) {
      Napi::HandleScope scope(env);
      const uint32_t end = std::min(n, base + kHandleChunk);
      bytes.clear();
      offsets.assign(1, 0);
      for (uint32_t i = base; i < end; ++i) {
        const View<uint8_t> input = RequireInput(env, inputs, i, "keccak256Batch");
        if (input.length != 0) bytes.insert(bytes.end(), input.data, input.data + input.length);
        offsets.push_back(bytes.size());
      }
      HashPacked(bytes.data(), offsets.data(), end - base, digests + kDigest * base);
    }
    return out;
  }

  Napi::Value Packed(const Napi::CallbackInfo& info) {
    const PackedCall call = ParsePackedCall(info, "keccak256Packed", false);
    HashPacked(call.data.data, call.offsets.data, call.count, call.out);
    return call.outValue;
  }

  Napi::Value Tree(const Napi::CallbackInfo& info) {
    const PackedCall call = ParsePackedCall(info, "keccak256Tree", true);
    HashTree(call.data.data, call.offsets.data, call.patch.data, call.count, call.out);
    return call.outValue;
  }

  // Copies every input (JS may mutate or detach them once we return), then hashes on
  // the libuv pool. Bad arguments reject the promise rather than throwing.
  Napi::Value BatchAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    try {
      const Napi::Array inputs = RequireInputs(env, info[0], "keccak256BatchAsync");
      const uint32_t n = inputs.Length();
      std::vector<size_t> offsets;
      offsets.reserve(static_cast<size_t>(n) + 1);
      offsets.push_back(0);
      std::vector<uint8_t> bytes;
      for (uint32_t base = 0; base < n; base += kHandleChunk) {
        Napi::HandleScope scope(env);
        const uint32_t end = std::min(n, base + kHandleChunk);
        for (uint32_t i = base; i < end; ++i) {
          const View<uint8_t> input = RequireInput(env, inputs, i, "keccak256BatchAsync");
          if (input.length != 0) bytes.insert(bytes.end(), input.data, input.data + input.length);
          offsets.push_back(bytes.size());
        }
      }
      Napi::Buffer<uint8_t> out = Napi::Buffer<uint8_t>::New(env, static_cast<size_t>(n) * kDigest);
      auto* worker = new BatchWorker(env, std::move(bytes), std::move(offsets), out);
      Napi::Promise promise = worker->Promise();
      worker->Queue();  // the worker deletes itself after OnOK/OnError
      return promise;
    } catch (const Napi::Error& error) {
      Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
      deferred.Reject(error.Value());
      return deferred.Promise();
    }
  }
};

}  // namespace

NODE_API_ADDON(KeccakAddon)
