/*
 * Batch verification of recoverable ECDSA signatures (secp256k1) against claimed public keys.
 *
 * Why: a miner recovers every transaction's sender (~30 µs of libsecp256k1 a signature), yet the
 * client that submitted it already recovered it. When the client sends the keys it recovered,
 * the miner only has to check them, and checking m signatures at once is one multi-scalar
 * multiplication instead of m separate ones.
 *
 * What: signature i (r_i, s_i, recovery id v_i, hash z_i) recovers to the claimed key Q_i iff
 *     s_i·R_i == z_i·G + r_i·Q_i,
 * where R_i is the curve point with x = r_i and y parity v_i: libsecp256k1's recovery computes
 * exactly Q = r⁻¹·(s·R − z·G), r being invertible. Divided by s_i and weighted by independent
 * random 128-bit a_i (from the OS's CSPRNG, unknown to whoever signed), all m checks become
 *     Σ a_i·R_i − Σ (a_i·r_i/s_i)·Q_i − (Σ a_i·z_i/s_i)·G == infinity,
 * one Pippenger multiplication of 2m points + G. If any check fails, the sum is infinity with
 * probability at most 2⁻¹²⁷ over the a_i. The R_i carry 128-bit scalars and so are not split by
 * the endomorphism; the Q_i and G are (3m + 2 entries of ≤ 128 bits).
 *
 * The arithmetic is libsecp256k1's own, compiled here from the sources the `secp256k1-sys` crate
 * vendors (its internal functions are `static`: this unit gets its own copies, and links to
 * nothing of the crate's library). Inputs the per-signature recovery would refuse are refused
 * here too (the whole batch answers 0 and the caller recovers one by one): r or s zero or ≥ n,
 * a recovery id other than 0 or 1, no curve point with x = r, a key coordinate ≥ p or a key off
 * the curve. High s is not refused (neither is it by recovery: transactions check it before).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/random.h>

#include "assumptions.h"
#include "util.h"
#include "field_impl.h"
#include "scalar_impl.h"
#include "group_impl.h"
#include "int128_impl.h"
#include "scratch_impl.h"
#include "ecmult_impl.h"

#define SECP(name) rustsecp256k1_v0_11_##name

typedef SECP(scalar) scalar_t;
typedef SECP(ge) ge_t;
typedef SECP(gej) gej_t;
typedef SECP(fe) fe_t;

/* Fills buf with len bytes from the OS's CSPRNG; 1 on success. */
int monsoon_batch_random(unsigned char *buf, size_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t got = getrandom(buf + done, len - done, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return 0;
        }
        done += (size_t)got;
    }
    return 1;
}

/* The bucket window libsecp256k1 would pick for `entries` split entries (2 per input point). */
static int auto_window(size_t entries) {
    return SECP(pippenger_bucket_window)(entries / 2);
}

/*
 * 1 if every signature i of the m (hashes 32 bytes each, sigs r‖s 64 bytes each, recids one byte
 * each, keys x‖y 64 bytes each) was made by key i; 0 if not, if any input is one recovery would
 * refuse, or if memory runs out. `rand16` holds 16·m bytes: the weights (from
 * monsoon_batch_random, or fixed for tests). `window` 0 picks the bucket window; 1..12 forces it.
 */
int monsoon_batch_verify(const unsigned char *hashes, const unsigned char *sigs, const unsigned char *recids,
                         const unsigned char *keys, size_t m, const unsigned char *rand16, int window) {
    size_t entries = 3 * m + 2;
    scalar_t *sc = NULL;
    ge_t *pt = NULL;
    scalar_t *sv = NULL; /* s_i, then s_i⁻¹ */
    scalar_t *pre = NULL;
    gej_t *buckets = NULL;
    struct SECP(pippenger_state) state;
    int *wnaf = NULL;
    struct SECP(pippenger_point_state) *ps = NULL;
    scalar_t gsum, inv, t, ri, zi, ai;
    gej_t result;
    int ok = 0;
    size_t i;

    if (m == 0) return 1;
    if (window <= 0) window = auto_window(entries);
    if (window > PIPPENGER_MAX_BUCKET_WINDOW) window = PIPPENGER_MAX_BUCKET_WINDOW;

    sc = (scalar_t *)malloc(entries * sizeof(*sc));
    pt = (ge_t *)malloc(entries * sizeof(*pt));
    sv = (scalar_t *)malloc(m * sizeof(*sv));
    pre = (scalar_t *)malloc(m * sizeof(*pre));
    buckets = (gej_t *)malloc(((size_t)1 << window) * sizeof(*buckets));
    ps = (struct SECP(pippenger_point_state) *)malloc(entries * sizeof(*ps));
    wnaf = (int *)malloc(entries * WNAF_SIZE(window + 1) * sizeof(int));
    if (!sc || !pt || !sv || !pre || !buckets || !ps || !wnaf) goto done;

    /* Parse and check every signature and key; R_i from r_i; prefix products of the s_i. */
    for (i = 0; i < m; i++) {
        int overflow = 0;
        fe_t x, y;
        ge_t q;
        const unsigned char *sig = sigs + 64 * i;
        const unsigned char *key = keys + 64 * i;
        if (recids[i] > 1) goto done;
        SECP(scalar_set_b32)(&ri, sig, &overflow);
        if (overflow || SECP(scalar_is_zero)(&ri)) goto done;
        SECP(scalar_set_b32)(&sv[i], sig + 32, &overflow);
        if (overflow || SECP(scalar_is_zero)(&sv[i])) goto done;
        /* r < n < p: a field element as it stands (recovery ids 2 and 3, x = r + n, are refused above). */
        if (!SECP(fe_set_b32_limit)(&x, sig)) goto done;
        if (!SECP(ge_set_xo_var)(&pt[3 * i], &x, recids[i] & 1)) goto done;
        if (!SECP(fe_set_b32_limit)(&x, key) || !SECP(fe_set_b32_limit)(&y, key + 32)) goto done;
        SECP(ge_set_xy)(&q, &x, &y);
        if (!SECP(ge_is_valid_var)(&q)) goto done;
        pt[3 * i + 1] = q;
        /* r_i parked in the Q entry's scalar until the weights are known. */
        sc[3 * i + 1] = ri;
        if (i == 0) pre[0] = sv[0];
        else SECP(scalar_mul)(&pre[i], &pre[i - 1], &sv[i]);
    }

    /* s_i⁻¹ for all i from one inversion (Montgomery's trick). */
    SECP(scalar_inverse_var)(&inv, &pre[m - 1]);
    for (i = m; i-- > 0;) {
        if (i > 0) {
            SECP(scalar_mul)(&t, &inv, &pre[i - 1]);
            SECP(scalar_mul)(&inv, &inv, &sv[i]);
            sv[i] = t;
        } else {
            sv[0] = inv;
        }
    }

    /* Entries: (a_i, R_i), (−a_i·r_i/s_i, Q_i) split by the endomorphism, (−Σ a_i·z_i/s_i, G) split. */
    SECP(scalar_set_int)(&gsum, 0);
    for (i = 0; i < m; i++) {
        unsigned char a32[32] = {0};
        memcpy(a32 + 16, rand16 + 16 * i, 16);
        a32[31] |= 1; /* never zero: a zero weight would drop its signature from the check */
        SECP(scalar_set_b32)(&ai, a32, NULL);
        sc[3 * i] = ai;
        SECP(scalar_mul)(&t, &ai, &sv[i]);              /* a_i/s_i */
        SECP(scalar_set_b32)(&zi, hashes + 32 * i, NULL); /* z mod n, as recovery reads it */
        SECP(scalar_mul)(&zi, &zi, &t);
        SECP(scalar_add)(&gsum, &gsum, &zi);
        SECP(scalar_mul)(&t, &t, &sc[3 * i + 1]);        /* a_i·r_i/s_i */
        SECP(scalar_negate)(&sc[3 * i + 1], &t);
        SECP(ecmult_endo_split)(&sc[3 * i + 1], &sc[3 * i + 2], &pt[3 * i + 1], &pt[3 * i + 2]);
    }
    SECP(scalar_negate)(&sc[3 * m], &gsum);
    pt[3 * m] = SECP(ge_const_g);
    SECP(ecmult_endo_split)(&sc[3 * m], &sc[3 * m + 1], &pt[3 * m], &pt[3 * m + 1]);

    state.ps = ps;
    state.wnaf_na = wnaf;
    SECP(ecmult_pippenger_wnaf)(buckets, window, &state, &result, sc, pt, entries);
    ok = SECP(gej_is_infinity)(&result);

done:
    free(sc);
    free(pt);
    free(sv);
    free(pre);
    free(buckets);
    free(ps);
    free(wnaf);
    return ok;
}
