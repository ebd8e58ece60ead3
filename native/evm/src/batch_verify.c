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
 * Σ sc[k]·pt[k] into r, as libsecp256k1's ecmult_pippenger_wnaf computes it (same wNAF digits,
 * same buckets, same order of the running sums), but with each bucket kept as an AFFINE point
 * while its points are gathered. Why: gathering is most of a batch's cost (~57 additions a
 * signature at Submit sizes), and adding two affine points costs one multiplication by an
 * inverse (≈ 2M + 1S, the inverse shared: 3M a point by Montgomery's trick, one inversion a
 * round) where adding an affine point to a Jacobian bucket costs 8M + 3S; the running sums then
 * add affine buckets (mixed, 8M + 3S) instead of Jacobian ones (12M + 4S).
 *
 * How, per window: the window's (bucket, ±point) items are grouped by bucket (counting sort);
 * each round adds the points of every group in pairs, all the round's pairs sharing one
 * inversion, so a group of k points takes ⌈log2 k⌉ rounds (~3-4 at ~6 points a bucket). A
 * pair with equal x (a doubling, or a point and its negation) is not added affinely: both
 * points go into the bucket's Jacobian remainder `rest[b]` (gej_add_ge_var handles every
 * case), which is added with the bucket's affine point in the running sum. Inputs: scalars of
 * at most 128 bits (after the endomorphism split), points not at infinity, x and y of
 * magnitude ≤ 1 and ≤ 2. `wnaf`: room for num·n_wnaf ints. 1, or 0 if memory runs out.
 */
static int pippenger_affine(int w, const scalar_t *sc, const ge_t *pt, size_t num, int *wnaf, gej_t *r) {
    size_t n_wnaf = WNAF_SIZE(w + 1);
    size_t nb = (size_t)1 << w;
    size_t cap = 2 * num; /* a point each, plus a skew correction each in window 0 */
    ge_t *item = NULL, *grp = NULL;
    size_t *bk = NULL, *cnt = NULL, *start = NULL, *pa = NULL;
    fe_t *den = NULL, *acc = NULL;
    gej_t *rest = NULL;
    int *rest_used = NULL, *skew = NULL;
    int ok = 0;
    size_t k, b;
    int i, j;

    item = (ge_t *)malloc(cap * sizeof(*item));
    grp = (ge_t *)malloc(cap * sizeof(*grp));
    bk = (size_t *)malloc(cap * sizeof(*bk));
    pa = (size_t *)malloc(cap * sizeof(*pa));
    den = (fe_t *)malloc(cap * sizeof(*den));
    acc = (fe_t *)malloc(cap * sizeof(*acc));
    cnt = (size_t *)malloc(nb * sizeof(*cnt));
    start = (size_t *)malloc(nb * sizeof(*start));
    rest = (gej_t *)malloc(nb * sizeof(*rest));
    rest_used = (int *)malloc(nb * sizeof(*rest_used));
    skew = (int *)malloc(num * sizeof(*skew));
    if (!item || !grp || !bk || !pa || !den || !acc || !cnt || !start || !rest || !rest_used || !skew) goto done;

    for (k = 0; k < num; k++) skew[k] = SECP(wnaf_fixed)(&wnaf[k * n_wnaf], &sc[k], w + 1);
    SECP(gej_set_infinity)(r);

    for (i = (int)n_wnaf - 1; i >= 0; i--) {
        size_t n_items = 0, pos;
        gej_t running;

        /* The window's items: (bucket, ±point). */
        for (k = 0; k < num; k++) {
            int n = wnaf[k * n_wnaf + i];
            if (i == 0 && skew[k]) {
                SECP(ge_neg)(&item[n_items], &pt[k]);
                bk[n_items++] = 0;
            }
            if (n > 0) {
                item[n_items] = pt[k];
                bk[n_items++] = (size_t)((n - 1) / 2);
            } else if (n < 0) {
                SECP(ge_neg)(&item[n_items], &pt[k]);
                bk[n_items++] = (size_t)(-(n + 1) / 2);
            }
        }
        /* Grouped by bucket. */
        for (b = 0; b < nb; b++) {
            cnt[b] = 0;
            rest_used[b] = 0;
        }
        for (k = 0; k < n_items; k++) cnt[bk[k]]++;
        for (b = 0, pos = 0; b < nb; b++) {
            start[b] = pos;
            pos += cnt[b];
            cnt[b] = 0;
        }
        for (k = 0; k < n_items; k++) grp[start[bk[k]] + cnt[bk[k]]++] = item[k];

        /* Rounds: every group's points added in pairs, one inversion a round. */
        for (;;) {
            size_t n_pairs = 0, n_den = 0;
            for (b = 0; b < nb; b++) {
                for (k = 0; k + 1 < cnt[b]; k += 2) {
                    const ge_t *p = &grp[start[b] + k], *q = &grp[start[b] + k + 1];
                    fe_t dx;
                    SECP(fe_negate)(&dx, &p->x, 1);
                    SECP(fe_add)(&dx, &q->x);
                    pa[n_pairs++] = start[b] + k;
                    if (SECP(fe_normalizes_to_zero_var)(&dx)) continue; /* left to the Jacobian remainder */
                    den[n_den] = dx;
                    if (n_den == 0) acc[0] = dx;
                    else SECP(fe_mul)(&acc[n_den], &acc[n_den - 1], &dx);
                    n_den++;
                }
            }
            if (n_pairs == 0) break;
            if (n_den > 0) {
                fe_t inv, t;
                SECP(fe_inv_var)(&inv, &acc[n_den - 1]);
                for (k = n_den - 1; k > 0; k--) {
                    SECP(fe_mul)(&t, &inv, &acc[k - 1]);
                    SECP(fe_mul)(&inv, &inv, &den[k]);
                    den[k] = t;
                }
                den[0] = inv;
            }
            /* Each group's sums (and an odd point out) packed at its start. */
            {
                size_t d = 0, e = 0;
                for (b = 0; b < nb; b++) {
                    size_t out = start[b], c = cnt[b];
                    if (c < 2) continue;
                    for (k = 0; k + 1 < c; k += 2, e++) {
                        const ge_t *p = &grp[pa[e]], *q = &grp[pa[e] + 1];
                        fe_t dx, dy, lam, x3, y3, t;
                        SECP(fe_negate)(&dx, &p->x, 1);
                        SECP(fe_add)(&dx, &q->x);
                        if (SECP(fe_normalizes_to_zero_var)(&dx)) {
                            if (!rest_used[b]) {
                                SECP(gej_set_infinity)(&rest[b]);
                                rest_used[b] = 1;
                            }
                            SECP(gej_add_ge_var)(&rest[b], &rest[b], p, NULL);
                            SECP(gej_add_ge_var)(&rest[b], &rest[b], q, NULL);
                            continue;
                        }
                        SECP(fe_negate)(&dy, &p->y, 2);
                        SECP(fe_add)(&dy, &q->y);
                        SECP(fe_mul)(&lam, &dy, &den[d++]);
                        SECP(fe_sqr)(&x3, &lam);
                        SECP(fe_negate)(&t, &p->x, 1);
                        SECP(fe_add)(&x3, &t);
                        SECP(fe_negate)(&t, &q->x, 1);
                        SECP(fe_add)(&x3, &t);
                        SECP(fe_normalize_weak)(&x3);
                        SECP(fe_negate)(&t, &x3, 1);
                        SECP(fe_add)(&t, &p->x);
                        SECP(fe_mul)(&y3, &lam, &t);
                        SECP(fe_negate)(&t, &p->y, 2);
                        SECP(fe_add)(&y3, &t);
                        SECP(fe_normalize_weak)(&y3);
                        SECP(ge_set_xy)(&grp[out], &x3, &y3);
                        out++;
                    }
                    if (c & 1) grp[out++] = grp[start[b] + c - 1];
                    cnt[b] = out - start[b];
                }
            }
        }

        for (j = 0; j < w; j++) SECP(gej_double_var)(r, r, NULL);
        /* r += Σ_b (2b+1)·bucket[b], by running sums as ecmult_pippenger_wnaf does. */
        SECP(gej_set_infinity)(&running);
        for (b = nb - 1; b > 0; b--) {
            if (cnt[b]) SECP(gej_add_ge_var)(&running, &running, &grp[start[b]], NULL);
            if (rest_used[b]) SECP(gej_add_var)(&running, &running, &rest[b], NULL);
            SECP(gej_add_var)(r, r, &running, NULL);
        }
        if (cnt[0]) SECP(gej_add_ge_var)(&running, &running, &grp[start[0]], NULL);
        if (rest_used[0]) SECP(gej_add_var)(&running, &running, &rest[0], NULL);
        SECP(gej_double_var)(r, r, NULL);
        SECP(gej_add_var)(r, r, &running, NULL);
    }
    ok = 1;

done:
    free(item);
    free(grp);
    free(bk);
    free(pa);
    free(den);
    free(acc);
    free(cnt);
    free(start);
    free(rest);
    free(rest_used);
    free(skew);
    return ok;
}

/*
 * 1 if every signature i of the m (hashes 32 bytes each, sigs r‖s 64 bytes each, recids one byte
 * each, keys x‖y 64 bytes each) was made by key i; 0 if not, if any input is one recovery would
 * refuse, or if memory runs out. `rand16` holds 16·m bytes: the weights (from
 * monsoon_batch_random, or fixed for tests). `window` 0 picks the bucket window; 1..12 forces it.
 * `jacobian`: libsecp256k1's own Pippenger (Jacobian buckets) instead of pippenger_affine, for
 * tests and benchmarks that hold the two to one answer.
 */
int monsoon_batch_verify(const unsigned char *hashes, const unsigned char *sigs, const unsigned char *recids,
                         const unsigned char *keys, size_t m, const unsigned char *rand16, int window, int jacobian) {
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

    if (jacobian) {
        state.ps = ps;
        state.wnaf_na = wnaf;
        SECP(ecmult_pippenger_wnaf)(buckets, window, &state, &result, sc, pt, entries);
    } else {
        if (!pippenger_affine(window, sc, pt, entries, wnaf, &result)) goto done;
    }
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
