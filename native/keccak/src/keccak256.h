// Keccak-256 (Ethereum's: rate 136 bytes, the original Keccak padding 0x01 ... 0x80), header-only,
// so other addons compile the same permutation instead of copying it: src/keccak.cc (this
// package's entry points) and native/rdma (its verified region walks) include this file.
#ifndef MONSOON_KECCAK256_H_
#define MONSOON_KECCAK256_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace monsoon_keccak {

constexpr size_t kRate = 136;    // bytes absorbed per permutation (1600 - 2 * 256 bits)
constexpr size_t kDigest = 32;   // Keccak-256 output
constexpr size_t kRateLanes = kRate / 8;

constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

inline uint64_t Rol(uint64_t x, unsigned n) { return (x << n) | (x >> (64 - n)); }

// Lanes are little-endian; memcpy keeps unaligned loads legal and compiles to one mov.
inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

inline void Store64(uint8_t* p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, 8);
}

// One round, reading lanes X.. and writing lanes Y.. (lane Xrc = row r, column c;
// rows b,g,k,m,s are y = 0..4, columns a,e,i,o,u are x = 0..4). Theta, rho and pi
// are fused; each group of five computes one output row through chi. Alternating
// A -> E -> A between two rounds avoids copying the state back.
#define KECCAK_ROUND(X, Y, rc)                       \
  BCa = X##ba ^ X##ga ^ X##ka ^ X##ma ^ X##sa;      \
  BCe = X##be ^ X##ge ^ X##ke ^ X##me ^ X##se;      \
  BCi = X##bi ^ X##gi ^ X##ki ^ X##mi ^ X##si;      \
  BCo = X##bo ^ X##go ^ X##ko ^ X##mo ^ X##so;      \
  BCu = X##bu ^ X##gu ^ X##ku ^ X##mu ^ X##su;      \
  Da = BCu ^ Rol(BCe, 1);                           \
  De = BCa ^ Rol(BCi, 1);                           \
  Di = BCe ^ Rol(BCo, 1);                           \
  Do = BCi ^ Rol(BCu, 1);                           \
  Du = BCo ^ Rol(BCa, 1);                           \
                                                    \
  BCa = X##ba ^ Da;                                 \
  BCe = Rol(X##ge ^ De, 44);                        \
  BCi = Rol(X##ki ^ Di, 43);                        \
  BCo = Rol(X##mo ^ Do, 21);                        \
  BCu = Rol(X##su ^ Du, 14);                        \
  Y##ba = BCa ^ (~BCe & BCi) ^ (rc);                \
  Y##be = BCe ^ (~BCi & BCo);                       \
  Y##bi = BCi ^ (~BCo & BCu);                       \
  Y##bo = BCo ^ (~BCu & BCa);                       \
  Y##bu = BCu ^ (~BCa & BCe);                       \
                                                    \
  BCa = Rol(X##bo ^ Do, 28);                        \
  BCe = Rol(X##gu ^ Du, 20);                        \
  BCi = Rol(X##ka ^ Da, 3);                         \
  BCo = Rol(X##me ^ De, 45);                        \
  BCu = Rol(X##si ^ Di, 61);                        \
  Y##ga = BCa ^ (~BCe & BCi);                       \
  Y##ge = BCe ^ (~BCi & BCo);                       \
  Y##gi = BCi ^ (~BCo & BCu);                       \
  Y##go = BCo ^ (~BCu & BCa);                       \
  Y##gu = BCu ^ (~BCa & BCe);                       \
                                                    \
  BCa = Rol(X##be ^ De, 1);                         \
  BCe = Rol(X##gi ^ Di, 6);                         \
  BCi = Rol(X##ko ^ Do, 25);                        \
  BCo = Rol(X##mu ^ Du, 8);                         \
  BCu = Rol(X##sa ^ Da, 18);                        \
  Y##ka = BCa ^ (~BCe & BCi);                       \
  Y##ke = BCe ^ (~BCi & BCo);                       \
  Y##ki = BCi ^ (~BCo & BCu);                       \
  Y##ko = BCo ^ (~BCu & BCa);                       \
  Y##ku = BCu ^ (~BCa & BCe);                       \
                                                    \
  BCa = Rol(X##bu ^ Du, 27);                        \
  BCe = Rol(X##ga ^ Da, 36);                        \
  BCi = Rol(X##ke ^ De, 10);                        \
  BCo = Rol(X##mi ^ Di, 15);                        \
  BCu = Rol(X##so ^ Do, 56);                        \
  Y##ma = BCa ^ (~BCe & BCi);                       \
  Y##me = BCe ^ (~BCi & BCo);                       \
  Y##mi = BCi ^ (~BCo & BCu);                       \
  Y##mo = BCo ^ (~BCu & BCa);                       \
  Y##mu = BCu ^ (~BCa & BCe);                       \
                                                    \
  BCa = Rol(X##bi ^ Di, 62);                        \
  BCe = Rol(X##go ^ Do, 55);                        \
  BCi = Rol(X##ku ^ Du, 39);                        \
  BCo = Rol(X##ma ^ Da, 41);                        \
  BCu = Rol(X##se ^ De, 2);                         \
  Y##sa = BCa ^ (~BCe & BCi);                       \
  Y##se = BCe ^ (~BCi & BCo);                       \
  Y##si = BCi ^ (~BCo & BCu);                       \
  Y##so = BCo ^ (~BCu & BCa);                       \
  Y##su = BCu ^ (~BCa & BCe);

// The permutation's body over lanes of type L (a 64-bit word, or four of them in a vector):
// the state held in locals, so the compiler keeps what it can in registers.
#define KECCAK_F1600_BODY(L)                                                    \
  L Aba = s[0], Abe = s[1], Abi = s[2], Abo = s[3], Abu = s[4];                 \
  L Aga = s[5], Age = s[6], Agi = s[7], Ago = s[8], Agu = s[9];                 \
  L Aka = s[10], Ake = s[11], Aki = s[12], Ako = s[13], Aku = s[14];            \
  L Ama = s[15], Ame = s[16], Ami = s[17], Amo = s[18], Amu = s[19];            \
  L Asa = s[20], Ase = s[21], Asi = s[22], Aso = s[23], Asu = s[24];            \
  L Eba, Ebe, Ebi, Ebo, Ebu, Ega, Ege, Egi, Ego, Egu, Eka, Eke, Eki, Eko, Eku;  \
  L Ema, Eme, Emi, Emo, Emu, Esa, Ese, Esi, Eso, Esu;                           \
  L BCa, BCe, BCi, BCo, BCu, Da, De, Di, Do, Du;                                \
                                                                                \
  for (int round = 0; round < 24; round += 2) {                                 \
    KECCAK_ROUND(A, E, kRoundConstants[round])                                  \
    KECCAK_ROUND(E, A, kRoundConstants[round + 1])                              \
  }                                                                             \
                                                                                \
  s[0] = Aba, s[1] = Abe, s[2] = Abi, s[3] = Abo, s[4] = Abu;                   \
  s[5] = Aga, s[6] = Age, s[7] = Agi, s[8] = Ago, s[9] = Agu;                   \
  s[10] = Aka, s[11] = Ake, s[12] = Aki, s[13] = Ako, s[14] = Aku;              \
  s[15] = Ama, s[16] = Ame, s[17] = Ami, s[18] = Amo, s[19] = Amu;              \
  s[20] = Asa, s[21] = Ase, s[22] = Asi, s[23] = Aso, s[24] = Asu;

// Keccak-f[1600] on 25 lanes.
inline void KeccakF1600(uint64_t* s) { KECCAK_F1600_BODY(uint64_t) }

// Keccak-256 of in[0..len) into out[0..32). `in` may be null when len is 0.
inline void Keccak256(const uint8_t* in, size_t len, uint8_t* out) {
  uint64_t s[25] = {};
  while (len >= kRate) {
    for (size_t i = 0; i < kRateLanes; ++i) s[i] ^= Load64(in + 8 * i);
    KeccakF1600(s);
    in += kRate;
    len -= kRate;
  }
  // Last block (0..135 bytes): whole lanes, then the partial lane with the 0x01 pad
  // byte after it; 0x80 sets the top bit of the rate's last byte.
  const size_t lanes = len / 8;
  const size_t tail = len % 8;
  for (size_t i = 0; i < lanes; ++i) s[i] ^= Load64(in + 8 * i);
  uint8_t last[8] = {};
  if (tail != 0) std::memcpy(last, in + 8 * lanes, tail);
  last[tail] = 0x01;
  s[lanes] ^= Load64(last);
  s[kRateLanes - 1] ^= 0x8000000000000000ULL;
  KeccakF1600(s);
  for (size_t i = 0; i < kDigest / 8; ++i) Store64(out + 8 * i, s[i]);
}


// ---- four messages at once ----------------------------------------------------------
//
// Where the CPU has AVX2 (checked at run time, so one build runs anywhere), four independent
// messages share each permutation (eight with AVX-512F): lane k of the state is a vector holding
// lane k of each of them. The round is KECCAK_ROUND itself over that vector type (GCC/Clang vector extensions give
// it ^, & and ~), so the scalar and the four-way permutation cannot drift apart. Callers with many
// independent inputs (a level of a verified walk, a batch of nodes) call Keccak256Many.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MONSOON_KECCAK_X4 1

typedef uint64_t Lanes4 __attribute__((vector_size(32)));

__attribute__((target("avx2"), always_inline)) inline Lanes4 Rol(Lanes4 x, unsigned n) {
  return (x << n) | (x >> (64 - n));
}

__attribute__((target("avx2"))) inline void KeccakF1600x4(Lanes4* s) { KECCAK_F1600_BODY(Lanes4) }

// The body of Keccak256x4 / Keccak256x8 over W-message lanes of type L, permuted by PERMUTE: up to
// W messages (count 1..W) into out[i][0..32). Each message absorbs its own blocks; one that has
// finished rides along (its lanes are not read again) until the longest is done, so inputs of
// similar length waste least. A last block's whole lanes are read in place, its partial lane with
// the 0x01 pad byte after it, and 0x80 set in the rate's last byte (as Keccak256 does).
#define KECCAK256_MANY_BODY(L, W, PERMUTE)                                           \
  L s[25] = {};                                                                      \
  size_t blocks[W] = {};                                                             \
  size_t most = 0;                                                                   \
  for (size_t m = 0; m < count; ++m) {                                               \
    blocks[m] = len[m] / kRate + 1;                                                  \
    if (blocks[m] > most) most = blocks[m];                                          \
  }                                                                                  \
  for (size_t b = 0; b < most; ++b) {                                                \
    for (size_t m = 0; m < count; ++m) {                                             \
      if (b >= blocks[m]) continue;                                                  \
      const uint8_t* block = in[m] + kRate * b;                                      \
      if (b + 1 < blocks[m]) {                                                       \
        for (size_t i = 0; i < kRateLanes; ++i) s[i][m] ^= Load64(block + 8 * i);    \
        continue;                                                                    \
      }                                                                              \
      const size_t tail = len[m] - kRate * b;                                        \
      const size_t lanes = tail / 8;                                                 \
      for (size_t i = 0; i < lanes; ++i) s[i][m] ^= Load64(block + 8 * i);           \
      uint8_t last[8] = {};                                                          \
      if (tail % 8 != 0) std::memcpy(last, block + 8 * lanes, tail % 8);             \
      last[tail % 8] = 0x01;                                                         \
      s[lanes][m] ^= Load64(last);                                                   \
      s[kRateLanes - 1][m] ^= 0x8000000000000000ULL;                                 \
    }                                                                                \
    PERMUTE(s);                                                                      \
    for (size_t m = 0; m < count; ++m)                                               \
      if (b + 1 == blocks[m])                                                        \
        for (size_t i = 0; i < kDigest / 8; ++i) Store64(out[m] + 8 * i, s[i][m]);   \
  }

// Keccak-256 of up to four messages (count 1..4) into out[i][0..32).
__attribute__((target("avx2"))) inline void Keccak256x4(const uint8_t* const* in, const size_t* len,
                                                         uint8_t* const* out, size_t count) {
  KECCAK256_MANY_BODY(Lanes4, 4, KeccakF1600x4)
}

inline bool HaveX4() {
  static const bool have = __builtin_cpu_supports("avx2");
  return have;
}

typedef uint64_t Lanes8 __attribute__((vector_size(64)));

__attribute__((target("avx512f"), always_inline)) inline Lanes8 Rol(Lanes8 x, unsigned n) {
  return (x << n) | (x >> (64 - n));
}

__attribute__((target("avx512f"))) inline void KeccakF1600x8(Lanes8* s) { KECCAK_F1600_BODY(Lanes8) }

// Keccak-256 of up to eight messages (count 1..8) into out[i][0..32).
__attribute__((target("avx512f"))) inline void Keccak256x8(const uint8_t* const* in, const size_t* len,
                                                           uint8_t* const* out, size_t count) {
  KECCAK256_MANY_BODY(Lanes8, 8, KeccakF1600x8)
}

inline bool HaveX8() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}
#endif

// Keccak-256 of count independent messages: in[i][0..len[i]) into out[i][0..32), four at a time
// where the CPU allows, grouped by how many blocks each absorbs (so four that share a permutation
// finish together). Inputs and outputs must not overlap one another.
inline void Keccak256Many(const uint8_t* const* in, const size_t* len, uint8_t* const* out, size_t count) {
#ifdef MONSOON_KECCAK_X4
  if (count >= 2 && HaveX4()) {
    // A counting sort of the messages by blocks (1..kGroups, longer ones together in the last).
    constexpr size_t kGroups = 8;
    thread_local std::vector<uint32_t> order;
    order.resize(count);
    size_t start[kGroups + 1] = {};
    for (size_t i = 0; i < count; ++i) {
      const size_t g = len[i] / kRate < kGroups - 1 ? len[i] / kRate : kGroups - 1;
      start[g + 1]++;
    }
    for (size_t g = 0; g < kGroups; ++g) start[g + 1] += start[g];
    for (size_t i = 0; i < count; ++i) {
      const size_t g = len[i] / kRate < kGroups - 1 ? len[i] / kRate : kGroups - 1;
      order[start[g]++] = static_cast<uint32_t>(i);
    }
    const size_t width = HaveX8() ? 8 : 4;
    for (size_t i = 0; i < count; i += width) {
      const size_t n = count - i < width ? count - i : width;
      const uint8_t* ins[8];
      size_t lens[8];
      uint8_t* outs[8];
      for (size_t m = 0; m < n; ++m) {
        const uint32_t j = order[i + m];
        ins[m] = in[j], lens[m] = len[j], outs[m] = out[j];
      }
      if (n == 1) Keccak256(ins[0], lens[0], outs[0]);
      else if (n > 4) Keccak256x8(ins, lens, outs, n);
      else Keccak256x4(ins, lens, outs, n);
    }
    return;
  }
#endif
  for (size_t i = 0; i < count; ++i) Keccak256(in[i], len[i], out[i]);
}

#undef KECCAK256_MANY_BODY
#undef KECCAK_F1600_BODY
#undef KECCAK_ROUND

}  // namespace monsoon_keccak

#endif  // MONSOON_KECCAK256_H_
