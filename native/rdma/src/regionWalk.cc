// Verified walks of an exported node region: see regionWalk.h. The walk mirrors src/proofWalk.ts
// (TrieCursor) step for step; test/unit/nativeWalk.test.ts holds the two to each other.
#include "regionWalk.h"

#include <array>
#include <cstring>

#include "keccak256.h"

namespace monsoon_rdma {

namespace {

constexpr uint32_t kSlots = 8;         // entries per bucket
constexpr uint32_t kEntryBytes = 16;   // u32 tag0, u32 tag1, u32 offset (8-byte units), u32 length
constexpr uint32_t kBucketBytes = kSlots * kEntryBytes;
constexpr uint64_t kArenaUnit = 8;
// No trie node or contract code is near this long; a longer entry is forged and not read.
constexpr uint32_t kMaxEntryBytes = 1u << 20;

const uint8_t kEmptyTrieRoot[32] = {0x56, 0xe8, 0x1f, 0x17, 0x1b, 0xcc, 0x55, 0xa6, 0xff, 0x83, 0x45,
                                    0xe6, 0x92, 0xc0, 0xf8, 0x6e, 0x5b, 0x48, 0xe0, 0x1b, 0x99, 0x6c,
                                    0xad, 0xc0, 0x01, 0x62, 0x2f, 0xb5, 0xe3, 0x63, 0xb4, 0x21};

inline uint32_t U32le(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

using Hash = std::array<uint8_t, 32>;

// Where a hash's entries may be: its two buckets' offsets in the region (equal when one bucket).
struct Buckets {
  uint64_t first, second;
};

inline Buckets BucketsOf(const Geometry& g, const uint8_t* h) {
  const uint64_t mask = g.bucketCount - 1;
  return {g.indexOffset + (U32le(h) & mask) * kBucketBytes, g.indexOffset + (U32le(h + 12) & mask) * kBucketBytes};
}

// An index entry that carries `h`'s tags and a length (`e`: 16 bytes of a bucket).
inline bool Tagged(const uint8_t* e, const uint8_t* h) {
  return U32le(e) == U32le(h + 4) && U32le(e + 4) == U32le(h + 8) && U32le(e + 12) != 0;
}

// The entry's node bytes in the region, or false when they can't be there (forged: read as a
// hash mismatch would be).
inline bool EntryBytes(const Geometry& g, const uint8_t* e, uint64_t* offset, uint32_t* length) {
  *length = U32le(e + 12);
  *offset = g.arenaOffset + static_cast<uint64_t>(U32le(e + 8)) * kArenaUnit;
  return *length <= kMaxEntryBytes && *offset + *length <= g.totalBytes;
}

// A node read by another walk of this batch but not yet answered (its level is in flight).
constexpr uint32_t kPending = 0xfffffffeu;

// Node hash -> value, open addressing (linear probing) in one array that doubles at half full:
// a walk of a thousand keys touches a few thousand nodes, and a node-per-allocation map spent
// more time in malloc than in the walk.
class HashIndex {
 public:
  explicit HashIndex(size_t expected) {
    size_t cap = 64;
    while (cap < 2 * expected) cap *= 2;
    slots_.resize(cap);
  }

  // The value stored for h, or nullptr.
  uint32_t* Find(const Hash& h) {
    for (size_t i = Home(h);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.hash == h) return &s.value;
    }
  }

  // Stores h -> v unless h is there already; true when stored.
  bool Insert(const Hash& h, uint32_t v) {
    if (2 * (used_ + 1) > slots_.size()) Grow();
    for (size_t i = Home(h);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (!s.used) {
        s.used = true;
        s.hash = h;
        s.value = v;
        used_++;
        return true;
      }
      if (s.hash == h) return false;
    }
  }

 private:
  struct Slot {
    Hash hash;
    uint32_t value;
    bool used = false;
  };

  size_t Home(const Hash& h) const {
    uint64_t v;
    std::memcpy(&v, h.data() + 16, 8);  // keccak output: any 8 bytes are uniform
    return static_cast<size_t>(v) & (slots_.size() - 1);
  }

  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.size() * 2);
    used_ = 0;
    for (const Slot& s : old)
      if (s.used) Insert(s.hash, s.value);
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;
};

// ---- lookups by hash --------------------------------------------------------------

struct Candidate {
  uint32_t lookup;  // which pending lookup
  uint64_t offset;  // in the region
  uint32_t length;
  uint32_t landing;  // where its bytes land, past the end of the result's data so far
};

// Looks up every hash (distinct), appending each verified node to `out.data`/`out.bounds`;
// idx[i] is the node index of hashes[i] or kNone. False when the source failed.
bool Lookup(RangeSource& source, const Geometry& g, const std::vector<Hash>& hashes, uint32_t maxTries,
            WalkResult& out, std::vector<uint32_t>& idx) {
  const size_t n = hashes.size();
  idx.assign(n, kNone);
  if (n == 0) return true;
  // Per-thread scratch, kept between calls: a lookup allocates nothing once warm.
  thread_local struct {
    std::vector<uint32_t> pending, again;
    std::vector<uint8_t> buckets, hadEntry, found, digests;
    std::vector<Range> ranges;
    std::vector<Candidate> cands;
    std::vector<const uint8_t*> inputs;
    std::vector<size_t> lengths;
    std::vector<uint8_t*> outputs;
  } t;
  std::vector<uint32_t>& pending = t.pending;
  std::vector<uint8_t>& buckets = t.buckets;
  std::vector<Range>& ranges = t.ranges;
  std::vector<Candidate>& cands = t.cands;
  std::vector<uint8_t>& hadEntry = t.hadEntry;
  std::vector<uint8_t>& found = t.found;
  std::vector<uint32_t>& again = t.again;
  std::vector<uint8_t>& digests = t.digests;
  std::vector<const uint8_t*>& inputs = t.inputs;
  std::vector<size_t>& lengths = t.lengths;
  std::vector<uint8_t*>& outputs = t.outputs;
  pending.resize(n);
  for (uint32_t i = 0; i < n; i++) pending[i] = i;
  for (uint32_t attempt = 0; !pending.empty(); attempt++) {
    // 1. Both buckets of every pending hash (the second only when it is another bucket).
    buckets.resize(pending.size() * 2 * kBucketBytes);
    ranges.clear();
    for (size_t k = 0; k < pending.size(); k++) {
      const Buckets b = BucketsOf(g, hashes[pending[k]].data());
      uint8_t* dst = buckets.data() + k * 2 * kBucketBytes;
      ranges.push_back({b.first, kBucketBytes, dst});
      if (b.second != b.first) ranges.push_back({b.second, kBucketBytes, dst + kBucketBytes});
      else std::memset(dst + kBucketBytes, 0, kBucketBytes);
    }
    out.counters.rounds++;
    if (!source.Read(ranges, &out.sourceError)) return false;
    // 2. The bytes of every entry carrying the hash's tags, first bucket first.
    ranges.clear();
    cands.clear();
    hadEntry.assign(pending.size(), 0);
    size_t landingBytes = 0;
    for (uint32_t k = 0; k < pending.size(); k++) {
      const uint8_t* h = hashes[pending[k]].data();
      const uint8_t* e = buckets.data() + static_cast<size_t>(k) * 2 * kBucketBytes;
      for (uint32_t s = 0; s < 2 * kSlots; s++, e += kEntryBytes) {
        if (!Tagged(e, h)) continue;
        hadEntry[k] = 1;
        uint64_t off;
        uint32_t len;
        if (!EntryBytes(g, e, &off, &len)) continue;
        cands.push_back({k, off, len, static_cast<uint32_t>(landingBytes)});
        landingBytes += len;
      }
    }
    // Candidates land at the end of out.data (no zero-fill: ByteVector), so a kept node is not
    // copied again; what fails the check is squeezed out below.
    const size_t base = out.data.size();
    out.data.resize(base + landingBytes);
    uint8_t* landed = out.data.data() + base;
    for (const Candidate& c : cands) ranges.push_back({c.offset, c.length, landed + c.landing});
    if (!ranges.empty()) {
      out.counters.rounds++;
      if (!source.Read(ranges, &out.sourceError)) return false;
    }
    // 3. Keep a copy only if it hashes to what was asked for: every candidate's digest first, in
    // one call (four at a time where the CPU allows), then the comparisons.
    inputs.resize(cands.size());
    lengths.resize(cands.size());
    outputs.resize(cands.size());
    digests.resize(32 * cands.size());
    for (size_t j = 0; j < cands.size(); j++) {
      inputs[j] = landed + cands[j].landing;
      lengths[j] = cands[j].length;
      outputs[j] = digests.data() + 32 * j;
    }
    monsoon_keccak::Keccak256Many(inputs.data(), lengths.data(), outputs.data(), cands.size());
    found.assign(pending.size(), 0);
    size_t kept = base;  // out.data's end once the kept candidates are back to back
    for (size_t j = 0; j < cands.size(); j++) {
      const Candidate& c = cands[j];
      if (found[c.lookup]) continue;
      const Hash& want = hashes[pending[c.lookup]];
      if (std::memcmp(outputs[j], want.data(), 32) != 0) {
        out.counters.rejected++;
        continue;
      }
      found[c.lookup] = 1;
      idx[pending[c.lookup]] = static_cast<uint32_t>(out.bounds.size() - 1);
      uint8_t* bytes = out.data.data() + base + c.landing;
      if (bytes != out.data.data() + kept) std::memmove(out.data.data() + kept, bytes, c.length);
      kept += c.length;
      out.hashes.insert(out.hashes.end(), want.begin(), want.end());
      out.bounds.push_back(static_cast<uint32_t>(kept));
      out.counters.nodes++;
    }
    out.data.resize(kept);
    again.clear();
    for (uint32_t k = 0; k < pending.size(); k++) {
      if (found[k]) continue;
      if (!hadEntry[k]) {
        out.counters.misses++;  // not in the region (not yet, or no more)
        continue;
      }
      out.counters.retries++;
      if (attempt + 1 < maxTries) again.push_back(pending[k]);
      else out.counters.misses++;
    }
    pending.swap(again);
  }
  return true;
}

// ---- RLP, as src/proofWalk.ts reads it --------------------------------------------

struct Malformed {
  const char* why;
};

struct Item {
  uint32_t start = 0;
  uint32_t end = 0;
  bool list = false;
};

void ItemAt(const uint8_t* b, uint32_t pos, uint32_t limit, Item& it) {
  if (pos >= limit) throw Malformed{"item runs past its list"};
  uint8_t p = b[pos];
  uint64_t start, len;
  bool list = false;
  if (p < 0x80) {
    start = pos;
    len = 1;
  } else if (p <= 0xb7) {
    start = pos + 1;
    len = p - 0x80;
  } else if (p < 0xc0 || p > 0xf7) {
    list = p > 0xf7;
    uint32_t n = list ? p - 0xf7 : p - 0xb7;
    if (static_cast<uint64_t>(pos) + 1 + n > limit) throw Malformed{"item longer than its container"};
    len = 0;
    for (uint32_t i = 0; i < n; i++) len = len * 256 + b[pos + 1 + i];
    start = pos + 1 + n;
  } else {
    list = true;
    start = pos + 1;
    len = p - 0xc0;
  }
  if (len > limit || start + len > limit) throw Malformed{"item longer than its container"};
  it.start = static_cast<uint32_t>(start);
  it.end = static_cast<uint32_t>(start + len);
  it.list = list;
}

uint32_t CountItems(const uint8_t* b, uint32_t start, uint32_t end, Item& scratch) {
  uint32_t n = 0;
  for (uint32_t pos = start; pos < end && n <= 17; n++) {
    ItemAt(b, pos, end, scratch);
    pos = scratch.end;
  }
  return n;
}

void Nth(const uint8_t* b, uint32_t start, uint32_t end, uint32_t index, Item& it) {
  uint32_t pos = start;
  for (uint32_t i = 0;; i++) {
    ItemAt(b, pos, end, it);
    if (i == index) return;
    pos = it.end;
  }
}

inline int NibbleOf(const uint8_t* key, uint32_t i) {
  if (i >= 64) return -1;
  return i & 1 ? key[i >> 1] & 15 : key[i >> 1] >> 4;
}

// One key's walk (proofWalk.ts TrieCursor).
struct Cursor {
  Hash need;
  bool needing = false;
  bool failed = false;
  uint32_t pos = 0;
  uint32_t valueNode = kNone, valueStart = 0, valueEnd = 0;
  std::vector<uint32_t> proof;

  void Done(uint32_t node, const Item* value) {
    needing = false;
    if (value == nullptr) return;
    if (value->list) throw Malformed{"a value is a list"};
    if (value->end == value->start) return;
    valueNode = node;
    valueStart = value->start;
    valueEnd = value->end;
  }

  void Give(const WalkResult& r, uint32_t node, const uint8_t* key) {
    proof.push_back(node);
    const uint8_t* b = r.data.data() + r.bounds[node];
    uint32_t len = r.bounds[node + 1] - r.bounds[node];
    Item it, sub;
    ItemAt(b, 0, len, it);
    for (;;) {
      if (!it.list) throw Malformed{"a trie node is not an RLP list"};
      uint32_t ls = it.start, le = it.end;
      uint32_t n = CountItems(b, ls, le, sub);
      if (n == 17) {
        if (pos == 64) {
          Nth(b, ls, le, 16, it);
          Done(node, &it);
          return;
        }
        Nth(b, ls, le, static_cast<uint32_t>(NibbleOf(key, pos++)), it);
      } else if (n == 2) {
        ItemAt(b, ls, le, sub);  // the hex-prefix path
        if (sub.list || sub.end == sub.start) throw Malformed{"a leaf or extension path is not a string"};
        int flag = b[sub.start] >> 4;
        bool match = true;
        uint32_t p = pos;
        if ((flag & 1) == 1) {
          if (NibbleOf(key, p) != (b[sub.start] & 15)) match = false;
          p++;
        }
        for (uint32_t i = sub.start + 1; match && i < sub.end; i++) {
          if (NibbleOf(key, p) != b[i] >> 4 || NibbleOf(key, p + 1) != (b[i] & 15)) match = false;
          p += 2;
        }
        ItemAt(b, sub.end, le, it);  // the value or child
        if (flag >= 2 || !match) {
          Done(node, flag >= 2 && match && p == 64 ? &it : nullptr);
          return;
        }
        pos = p;
      } else {
        throw Malformed{"a trie node of neither 2 nor 17 items"};
      }
      if (it.list) continue;  // embedded in its parent: read in place, not part of the proof
      uint32_t clen = it.end - it.start;
      if (clen == 0) {
        Done(node, nullptr);
        return;
      }
      if (clen != 32) throw Malformed{"a child reference that is not 32 bytes"};
      std::memcpy(need.data(), b + it.start, 32);
      return;
    }
  }
};

}  // namespace

bool MemorySource::Read(const std::vector<Range>& ranges, std::string* error) {
  for (const Range& r : ranges) {
    if (r.offset > bytes_ || r.length > bytes_ - r.offset) {
      *error = "a read past the end of the region";
      return false;
    }
    std::memcpy(r.dst, base_ + r.offset, r.length);
  }
  return true;
}

int64_t ReadNode(const uint8_t* base, const Geometry& g, const uint8_t* hash, uint32_t maxTries, uint8_t* out,
                 size_t outBytes) {
  const Buckets b = BucketsOf(g, hash);
  uint8_t digest[32];
  for (uint32_t attempt = 0; attempt < maxTries; attempt++) {
    bool hadEntry = false;
    for (int k = 0; k < 2; k++) {
      if (k == 1 && b.second == b.first) break;
      const uint8_t* e = base + (k == 0 ? b.first : b.second);
      for (uint32_t s = 0; s < kSlots; s++, e += kEntryBytes) {
        if (!Tagged(e, hash)) continue;
        hadEntry = true;
        uint64_t off;
        uint32_t len;
        if (!EntryBytes(g, e, &off, &len)) continue;
        if (len > outBytes) return -static_cast<int64_t>(len) - 2;
        // Copied first, then checked: the copy is what is kept, whatever the writer does next.
        std::memcpy(out, base + off, len);
        monsoon_keccak::Keccak256(out, len, digest);
        if (std::memcmp(digest, hash, 32) == 0) return len;
      }
    }
    if (!hadEntry) return -1;  // not in the region (not yet, or no more)
  }
  return -1;
}

WalkResult Walk(RangeSource& source, const Geometry& g, const WalkRequest& req) {
  WalkResult r;
  const uint32_t nk = req.keyCount;
  r.data.reserve(static_cast<size_t>(nk) * 1536 + 4096);  // ~6 nodes of ~250 B a key: one allocation
  std::vector<Cursor> cursors(nk);
  HashIndex known(4 * static_cast<size_t>(nk) + 4 * req.fetchCount);  // node hash -> index in r
  std::vector<Hash> level;
  std::vector<uint32_t> idx;
  try {
    for (uint32_t i = 0; i < nk; i++) {
      const uint8_t* root = req.roots + 32 * static_cast<size_t>(req.rootOf[i]);
      if (std::memcmp(root, kEmptyTrieRoot, 32) == 0) continue;  // nothing to read: absent
      std::memcpy(cursors[i].need.data(), root, 32);
      cursors[i].needing = true;
      cursors[i].proof.reserve(8);
    }
    for (;;) {
      // The distinct nodes this level waits for that no earlier level read.
      level.clear();
      bool waiting = false;
      for (Cursor& c : cursors) {
        if (!c.needing || c.failed) continue;
        waiting = true;
        if (known.Insert(c.need, kPending)) level.push_back(c.need);
      }
      if (!waiting) break;
      if (!Lookup(source, g, level, req.maxTries, r, idx)) return r;
      for (size_t j = 0; j < level.size(); j++) *known.Find(level[j]) = idx[j];
      for (uint32_t i = 0; i < nk; i++) {
        Cursor& c = cursors[i];
        if (!c.needing || c.failed) continue;
        uint32_t node = *known.Find(c.need);
        if (node == kNone) c.failed = true;
        else c.Give(r, node, req.keys + 32 * static_cast<size_t>(i));
      }
    }
    level.clear();
    std::vector<Hash> fresh;
    for (uint32_t i = 0; i < req.fetchCount; i++) {
      Hash h;
      std::memcpy(h.data(), req.fetch + 32 * static_cast<size_t>(i), 32);
      level.push_back(h);
      if (known.Insert(h, kPending)) fresh.push_back(h);
    }
    if (!Lookup(source, g, fresh, req.maxTries, r, idx)) return r;
    for (size_t j = 0; j < fresh.size(); j++) *known.Find(fresh[j]) = idx[j];
    r.fetched.reserve(req.fetchCount);
    for (const Hash& h : level) r.fetched.push_back(*known.Find(h));
  } catch (const Malformed& m) {
    r.malformed = std::string("a verified trie node is malformed: ") + m.why;
    return r;
  }
  r.ok.resize(nk);
  r.values.resize(3 * static_cast<size_t>(nk));
  r.proofBounds.reserve(nk + 1);
  for (uint32_t i = 0; i < nk; i++) {
    const Cursor& c = cursors[i];
    r.ok[i] = c.failed ? 0 : 1;
    r.values[3 * i] = c.valueNode;
    r.values[3 * i + 1] = c.valueStart;
    r.values[3 * i + 2] = c.valueEnd;
    r.proof.insert(r.proof.end(), c.proof.begin(), c.proof.end());
    r.proofBounds.push_back(static_cast<uint32_t>(r.proof.size()));
  }
  return r;
}

}  // namespace monsoon_rdma
