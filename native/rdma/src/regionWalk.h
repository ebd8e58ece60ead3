// Verified walks of an exported node region (format 1, README "Region layout"), in C++: the
// same walk as src/proofWalk.ts (the reference), for many keys at once, a trie level at a time.
//
// A level reads the index buckets of every node the walks wait for (one batch of byte ranges),
// then the bytes of every entry whose tags match (a second batch), and keeps a node only if its
// keccak-256 is the hash its parent named. A node that fails the check is looked up again
// (maxTries rounds), then reported missing; the caller asks gRPC. Where the bytes come from is
// a RangeSource: the mapping itself (shared memory) or RDMA READs into registered memory — one
// walk, two sources. Nothing here touches N-API, so the RDMA source can run the whole walk off
// the JS thread.
#ifndef MONSOON_RDMA_REGION_WALK_H_
#define MONSOON_RDMA_REGION_WALK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace monsoon_rdma {

// What a region's header says (checked by the caller: src/regionLayout.ts readHeader).
struct Geometry {
  uint64_t bucketCount = 0;  // a power of two
  uint64_t indexOffset = 0;
  uint64_t arenaOffset = 0;
  uint64_t totalBytes = 0;  // header + index + arena
};

// One byte range of the region to copy into local memory.
struct Range {
  uint64_t offset;
  uint32_t length;
  uint8_t* dst;
};

// Where a walk's bytes come from. Read copies every range (all inside [0, totalBytes)) to its
// dst, as one batch (one doorbell over RDMA); false with `error` set when the reads failed.
class RangeSource {
 public:
  virtual ~RangeSource() = default;
  virtual bool Read(const std::vector<Range>& ranges, std::string* error) = 0;
};

// The region in this process's memory (a shared mapping, or a buffer holding one).
class MemorySource : public RangeSource {
 public:
  MemorySource(const uint8_t* base, uint64_t bytes) : base_(base), bytes_(bytes) {}
  bool Read(const std::vector<Range>& ranges, std::string* error) override;

 private:
  const uint8_t* base_;
  uint64_t bytes_;
};

// A batch: `keys` (32 bytes each, already hashed) walked from `roots[rootOf[i]]`, and `fetch`
// (32-byte hashes of blobs, e.g. code) read by hash without walking.
struct WalkRequest {
  const uint8_t* roots = nullptr;
  uint32_t rootCount = 0;
  const uint8_t* keys = nullptr;
  const uint32_t* rootOf = nullptr;
  uint32_t keyCount = 0;
  const uint8_t* fetch = nullptr;
  uint32_t fetchCount = 0;
  uint32_t maxTries = 3;
};

constexpr uint32_t kNone = 0xffffffffu;

struct WalkCounters {
  uint64_t nodes = 0;     // verified nodes read
  uint64_t retries = 0;   // lookups whose entries all failed the check, tried again or given up
  uint64_t misses = 0;    // lookups given up (no entry, or every try failed)
  uint64_t rejected = 0;  // entries whose bytes failed the hash check (torn, reused, forged)
  uint64_t rounds = 0;    // batches of reads posted (two per lookup round: buckets, then nodes)
};

// Bytes that resize without zeroing what they add (the walk lands node reads there and
// overwrites every byte it keeps).
template <typename T>
struct DefaultInit : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInit<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using ByteVector = std::vector<uint8_t, DefaultInit<uint8_t>>;

struct WalkResult {
  // Every distinct verified node (and fetched blob), back to back: node i is
  // data[bounds[i], bounds[i + 1]).
  ByteVector data;
  std::vector<uint32_t> bounds{0};
  // Node i's keccak-256 (the hash it was looked up by, and checked against): hashes[32i, 32i + 32).
  std::vector<uint8_t> hashes;
  // Per key: 1 walked (value below, maybe absent), 0 not walked (a node could not be had).
  std::vector<uint8_t> ok;
  // Per key: the value as [node, start, end) (node kNone: absent).
  std::vector<uint32_t> values;
  // Per key i: its proof's node indexes are proof[proofBounds[i], proofBounds[i + 1]).
  std::vector<uint32_t> proof;
  std::vector<uint32_t> proofBounds{0};
  // Per fetch hash: its node index, or kNone.
  std::vector<uint32_t> fetched;
  WalkCounters counters;
  // Set when a source read failed (then nothing else is meaningful) ...
  std::string sourceError;
  // ... or when a verified node is malformed RLP (the chain committed to it: its own bug).
  std::string malformed;
};

// Walks `req` over `source`; never throws (errors are in the result).
WalkResult Walk(RangeSource& source, const Geometry& g, const WalkRequest& req);

// One node by hash from a region in this process's memory (`base`, spanning g.totalBytes),
// verified: copied into `out` and kept only if its keccak-256 is `hash` (a walk's single step,
// without the walk's bookkeeping). Its length; -1 when it can't be had (no entry, or every
// try's bytes failed the check); -(length + 2) when `outBytes` is too short for it.
int64_t ReadNode(const uint8_t* base, const Geometry& g, const uint8_t* hash, uint32_t maxTries, uint8_t* out,
                 size_t outBytes);

}  // namespace monsoon_rdma

#endif  // MONSOON_RDMA_REGION_WALK_H_
