/* The Klondike solver's search (solve_klondike.solve_klondike) in C: an exact port.
 *
 * Keys that are equal exactly when Python's are (shorter bytes: key_head), the same move
 * generation and order (the seeded random orders of the
 * restarts use CPython's Mersenne Twister, seeded and drawn as random.Random(run).shuffle
 * does), the same prunings (forced moves, deferred plays, talon chains, the twin rule,
 * pointer dominance, a top back in the talon, a pass limit relaxed), the same dead test
 * (solve_klondike_dead, the last pass's waste stack included) and the same budget counting
 * (solve_common.search_run and the restart schedule). For a position and a budget it
 * returns the verdict, the moves of a win up to the trivially won position (Python plays
 * out the finish and names the piles) and the positions expanded, all equal to the Python
 * search's. The proofs are those of the Python modules
 * (docs/SOLVABILITY.md). No I/O; the search runs without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define T 7
#define PILEMAX 64 /* a pile's cards (at most 52) and room for copy_short's overrun */
#define TT 0
#define TF 1
#define WT 2
#define WF 3
#define FT 4
#define FULL (13 * (1 + 16 + 256 + 4096))
#define PROVED_LOST (-1)
#define ABSENT (-2)

#define V_WON 0
#define V_LOST 1
#define V_UNKNOWN 2
#define V_NOMEM 3
#define V_SIGNAL 4 /* a signal handler raised (e.g. a CPU cap's, or Ctrl-C) */

/* every this many moves tried, the search takes the GIL back to run signal handlers */
#define SIGNAL_EVERY 16384

typedef uint64_t mask_t;
#define BIT(c) (((mask_t)1) << (c))

static int RANK_[52], SUIT_[52], RED_[52];
static int PARENTS_[52][2], NPAR[52];
static int CHILDREN_[52][2], NCHI[52];
static const int OTHER_COLOUR[4][2] = {{1, 2}, {0, 3}, {0, 3}, {1, 2}};
static const int SAME_COLOUR[4] = {3, 2, 1, 0};
static const int KINGS[4] = {12, 25, 38, 51};

static void init_tables(void) {
    for (int c = 0; c < 52; c++) {
        RANK_[c] = c % 13 + 1;
        SUIT_[c] = c / 13;
        RED_[c] = (c / 13 == 1 || c / 13 == 2);
    }
    for (int c = 0; c < 52; c++) {
        NPAR[c] = 0;
        NCHI[c] = 0;
        for (int s = 0; s < 4; s++) {
            int red = (s == 1 || s == 2);
            if (red != RED_[c]) {
                if (RANK_[c] < 13) PARENTS_[c][NPAR[c]++] = s * 13 + RANK_[c];
                if (RANK_[c] > 1) CHILDREN_[c][NCHI[c]++] = s * 13 + RANK_[c] - 2;
            }
        }
    }
}

/* ------------------------------------------------------------ Mersenne Twister (CPython's) */

typedef struct {
    uint32_t mt[624];
    int index;
} MT;

static void mt_init_genrand(MT *m, uint32_t s) {
    m->mt[0] = s;
    for (int i = 1; i < 624; i++)
        m->mt[i] = (1812433253U * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i);
    m->index = 624;
}

/* random.Random(seed) for 0 <= seed < 2**32: init_by_array with the one 32-bit word */
static void mt_seed(MT *m, uint32_t seed) {
    uint32_t key[1] = {seed};
    int key_length = 1;
    mt_init_genrand(m, 19650218U);
    int i = 1, j = 0;
    int k = 624 > key_length ? 624 : key_length;
    for (; k; k--) {
        m->mt[i] = (m->mt[i] ^ ((m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= 624) {
            m->mt[0] = m->mt[623];
            i = 1;
        }
        if (j >= key_length) j = 0;
    }
    for (k = 623; k; k--) {
        m->mt[i] = (m->mt[i] ^ ((m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= 624) {
            m->mt[0] = m->mt[623];
            i = 1;
        }
    }
    m->mt[0] = 0x80000000U;
}

static uint32_t mt_next(MT *m) {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y;
    if (m->index >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; kk++) {
            y = (m->mt[kk] & 0x80000000U) | (m->mt[kk + 1] & 0x7fffffffU);
            m->mt[kk] = m->mt[kk + 397] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < 623; kk++) {
            y = (m->mt[kk] & 0x80000000U) | (m->mt[kk + 1] & 0x7fffffffU);
            m->mt[kk] = m->mt[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (m->mt[623] & 0x80000000U) | (m->mt[0] & 0x7fffffffU);
        m->mt[623] = m->mt[396] ^ (y >> 1) ^ mag01[y & 0x1U];
        m->index = 0;
    }
    y = m->mt[m->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

static int bit_length(unsigned n) {
    int k = 0;
    while (n) {
        k++;
        n >>= 1;
    }
    return k;
}

/* random.Random._randbelow_with_getrandbits for 1 <= n < 2**32 */
static unsigned mt_below(MT *m, unsigned n) {
    int k = bit_length(n);
    unsigned r = mt_next(m) >> (32 - k);
    while (r >= n) r = mt_next(m) >> (32 - k);
    return r;
}

/* ------------------------------------------------------------ moves */

typedef struct {
    int8_t kind, a, b, n, c;
    int32_t deals, recycled, after, rec; /* the talon macro */
} Move;

typedef struct {
    Move *v;
    int n, cap;
} MoveVec;

static int mv_push(MoveVec *mv, Move m) {
    if (mv->n == mv->cap) {
        int cap = mv->cap ? mv->cap * 2 : 64;
        Move *v = realloc(mv->v, (size_t)cap * sizeof(Move));
        if (!v) return -1;
        mv->v = v;
        mv->cap = cap;
    }
    mv->v[mv->n++] = m;
    return 0;
}

/* ------------------------------------------------------------ large tables */

/* The visited set's two tables (its slots and its arena of records) grow to GiBs in the long
   searches, and every position looks a key up at a random place in both. With the kernel's
   4 KiB pages nearly every such look-up misses the TLB as well as the cache, so on Linux a
   table of 2 MiB or more is mapped at a 2 MiB boundary and asked for transparent huge pages
   (MADV_HUGEPAGE: this machine's kernel gives them only on request): 5-7% less CPU a
   position at 40 million positions, 17% at 100 million (docs/SOLVABILITY.md, eighteenth pass). Smaller tables, and other
   systems, use malloc. A table is freed with the size it was allocated with, which decides
   which of the two it came from. Zeroed either way. The tests lower the bound and the
   tables' first sizes (table_sizes) so that their small searches map, grow and free every
   table this way too. */
#define HUGE_PAGE ((size_t)2 << 20)
static size_t BIG = HUGE_PAGE;
static size_t FIRST = (size_t)1 << 20; /* each table's first size in bytes (a power of 2) */
/* The arena doubles up to STEP bytes, then grows STEP at a time: mremap copies nothing, and the
   address space a search holds stays within STEP of what it uses, so an address-space limit
   (ulimit -v) bounds what a search may take. Records are named by offset / 4 in 32 bits (0 is
   an empty slot), so the arena ends at ARENA_MAX: 16 GiB. Until 2026-12-06 it only doubled, and
   the doubling from 8 GiB to 16 GiB overshot that bound by 4 bytes, so a search that filled
   8 GiB of records ended in "no memory" (standard Klondike seed 902 at 300 CPU s). */
static size_t STEP = (size_t)1 << 30;
#define ARENA_MAX ((size_t)0xFFFFFFFF * 4)

/* the arena's next capacity after cap bytes (ARENA_MAX when it is there already) */
static size_t arena_next(size_t cap) {
    size_t next = !cap ? FIRST : cap < STEP ? cap * 2 : cap + STEP;
    return next < ARENA_MAX ? next : ARENA_MAX;
}

static void *big_alloc(size_t n) {
#ifdef __linux__
    if (n >= BIG) {
        size_t len = (n + 4095) & ~(size_t)4095;
        uint8_t *p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        size_t head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
        if (head) munmap(p, head);
        if (HUGE_PAGE - head) munmap(p + head + len, HUGE_PAGE - head);
        p += head;
        madvise(p, len, MADV_HUGEPAGE); /* a request: without it the pages stay small */
        return p;
    }
#endif
    return calloc(1, n);
}

static void big_free(void *p, size_t n) {
    if (!p) return;
#ifdef __linux__
    if (n >= BIG) {
        munmap(p, (n + 4095) & ~(size_t)4095);
        return;
    }
#endif
    (void)n;
    free(p);
}

/* p (n bytes, of which the first used are kept) grown to cap bytes; NULL: no memory, p kept.
   A mapped table moves with mremap, which copies no bytes and keeps no second copy (the
   kernel places a large mapping at a huge page boundary, so its huge pages move whole). */
static void *big_grow(void *p, size_t n, size_t used, size_t cap) {
    if (cap < BIG) return realloc(p, cap);
#ifdef __linux__
    if (n >= BIG) {
        size_t len = (cap + 4095) & ~(size_t)4095;
        void *q = mremap(p, (n + 4095) & ~(size_t)4095, len, MREMAP_MAYMOVE);
        if (q == MAP_FAILED) return NULL;
        madvise(q, len, MADV_HUGEPAGE);
        return q;
    }
#endif
    uint8_t *q = big_alloc(cap);
    if (!q) return NULL;
    if (used) memcpy(q, p, used);
    big_free(p, n);
    return q;
}

/* ------------------------------------------------------------ the visited set */

/* Each position is a record in the arena: its value (a Tarjan index, PROVED_LOST or ABSENT:
   deleted) as an int32, its key's length and its bytes, padded to 4 bytes; a record is named
   by its offset / 4. The table's slots hold hash << 32 | (record + 1), 0 when empty. */
typedef struct {
    uint8_t *arena;
    size_t arena_n, arena_cap;
    uint32_t count;
    uint64_t *slot;
    uint32_t mask;
} Seen;

#define REC_VALUE(s, r) (*(int32_t *)((s)->arena + (size_t)(r) * 4))

static uint32_t hash_bytes(const uint8_t *k, int n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, k + i, 8);
        h = (h ^ v) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    /* the tail as one 8-byte load, the bytes past the key masked off (every key lies in a
       buffer of KEYMAX bytes, far more than the longest key): no call to memcpy */
    uint64_t v;
    memcpy(&v, k + i, 8);
    v = n - i ? v & (~(uint64_t)0 >> (64 - 8 * (n - i))) : 0;
    h = (h ^ v) * 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 29;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
    return (uint32_t)h;
}

static int seen_init(Seen *s) {
    memset(s, 0, sizeof(*s));
    s->mask = (uint32_t)(FIRST / 2 / sizeof(uint64_t)) - 1;
    s->slot = big_alloc(((size_t)s->mask + 1) * sizeof(uint64_t));
    return s->slot ? 0 : -1;
}

static void seen_free(Seen *s) {
    big_free(s->arena, s->arena_cap);
    big_free(s->slot, ((size_t)s->mask + 1) * sizeof(uint64_t));
}

/* the record of key k, or -1 */
static int64_t seen_find(const Seen *s, const uint8_t *k, int n, uint32_t h) {
    uint32_t i = h & s->mask;
    for (;;) {
        uint64_t sl = s->slot[i];
        if (!sl) return -1;
        if ((uint32_t)(sl >> 32) == h) {
            uint32_t r = (uint32_t)sl - 1;
            const uint8_t *rec = s->arena + (size_t)r * 4;
            if (rec[4] == n && memcmp(rec + 5, k, (size_t)n) == 0) return (int64_t)r;
        }
        i = (i + 1) & s->mask;
    }
}

static int seen_get(const Seen *s, const uint8_t *k, int n) {
    int64_t r = seen_find(s, k, n, hash_bytes(k, n));
    return r < 0 ? ABSENT : REC_VALUE(s, r);
}

static int seen_grow(Seen *s) {
    uint32_t mask = s->mask * 2 + 1;
    uint64_t *slot = big_alloc(((size_t)mask + 1) * sizeof(uint64_t));
    if (!slot) return -1;
    for (uint64_t j = 0; j <= s->mask; j++) {
        uint64_t sl = s->slot[j];
        if (!sl) continue;
        uint32_t i = (uint32_t)(sl >> 32) & mask;
        while (slot[i]) i = (i + 1) & mask;
        slot[i] = sl;
    }
    big_free(s->slot, ((size_t)s->mask + 1) * sizeof(uint64_t));
    s->slot = slot;
    s->mask = mask;
    return 0;
}

/* add key k (hash h), known to have no record, with value; returns its record or -1 (no
   memory). The search looks a child's key up first (seen_find), so a new one is added with
   that hash and without a second look-up. */
static int64_t seen_add(Seen *s, const uint8_t *k, int n, uint32_t h, int value) {
    int64_t r;
    /* at most three records a four slots: linear probing stays short (a probe reads 8 slots a
       cache line), and the table is 10.7-21 bytes a position instead of half load's 16-32 */
    if ((uint64_t)(s->count + 1) * 4 > ((uint64_t)s->mask + 1) * 3) {
        if (s->mask >= 0x7FFFFFFFu || seen_grow(s) < 0) return -1;
    }
    size_t size = (5 + (size_t)n + 3) & ~(size_t)3;
    if (s->arena_n + size > s->arena_cap) {
        size_t cap = arena_next(s->arena_cap);
        if (s->arena_n + size > cap) return -1; /* ARENA_MAX reached */
        uint8_t *a = big_grow(s->arena, s->arena_cap, s->arena_n, cap);
        if (!a) return -1;
        s->arena = a;
        s->arena_cap = cap;
    }
    uint8_t *rec = s->arena + s->arena_n;
    r = (int64_t)(s->arena_n / 4);
    *(int32_t *)rec = value;
    rec[4] = (uint8_t)n;
    memcpy(rec + 5, k, (size_t)n);
    s->arena_n += size;
    s->count++;
    uint32_t i = h & s->mask;
    while (s->slot[i]) i = (i + 1) & s->mask;
    s->slot[i] = (uint64_t)h << 32 | (uint64_t)(r + 1);
    return r;
}

/* set key k's value (adding it when new); returns its record or -1 (no memory) */
static int64_t seen_set(Seen *s, const uint8_t *k, int n, int value) {
    uint32_t h = hash_bytes(k, n);
    int64_t r = seen_find(s, k, n, h);
    if (r >= 0) {
        REC_VALUE(s, r) = value;
        return r;
    }
    return seen_add(s, k, n, h, value);
}

/* ------------------------------------------------------------ the position */

typedef struct {
    int draw, build, passes, rec, p;
    uint8_t tab[T][PILEMAX];
    int len[T], down[T];
    int found[4];
    int fint;
    uint8_t talon[52];
    int tn;
    mask_t from_talon;
    int talon_key;
    int rec_bytes; /* the recycle count's bytes in the key (talon_key 2): as few as the limit needs */
    /* flags of solve_klondike (off only to measure them) */
    int defer_home, chain, twin, pointer_key, dominance, returned;
    /* draw three (or more), unlimited passes: a card back in the talon (returned3_lost); off
       by default (solve_klondike.RETURNED_DRAW) */
    int returned3;
    /* draw three: the looser forced-play test in safe() (solve_klondike.LOOSE_SAFE_DRAW) */
    int loose;
    /* draw one with a pass limit: the same deal searched with unlimited passes beside this
       search, its positions proved lost also lost here (solve_klondike.RELAXED); NULL when off */
    const Seen *relaxed;
    int relax;
    /* a pass limit, the last pass: the dead test's waste stack (solve_klondike.WASTE_STACK) */
    int waste_stack;
    uint8_t orig_at[52]; /* each card's index in the talon the search started from */
    MT rng;
    int use_rng;
    PyThreadState *ts; /* the thread's state while the search runs without the GIL */
    unsigned tick;
} State;

#define KEYMAX 128 /* the longest key is under 90 bytes; copy_short and hash_bytes read past it */

/* dst[0:n] = src[0:n] in 8-byte steps: writes and reads up to 7 bytes past n, which every
   caller has room for (the key buffers' KEYMAX, the piles' PILEMAX); a pile's few face-up
   cards copied without a call to memcpy, whose calls cost more than the copy (this and
   hash_bytes's tail load: a search 1.2x faster) */
static inline void copy_short(uint8_t *dst, const uint8_t *src, int n) {
    for (int i = 0; i < n; i += 8) memcpy(dst + i, src + i, 8);
}

/* A pile's tag, the first byte of its part of the key. The face-down cards of pile x are
   always the first `down` cards the search started with there (they only leave it by being
   turned up, and a pile refilled from empty has none), so (x, down) names them and the key
   holds the tag instead of the cards: 0x3F for no face-down card, 0x40 + 16x + down for 1 to
   15 (0xC0 + x and a byte of the count for more, which no dealt position has). Tags are
   above every card (0-51), so the piles need no separator, and the key is 7 bytes plus the
   face-down cards shorter than Python's (KlondikeState.key; the foundations in two bytes,
   not three, and with a pass limit the recycles in rec_bytes, not eight): less memory a
   position and fewer cache misses, the same positions equal (the search is the same). */
static inline int pile_tag(const State *st, int x) {
    int d = st->down[x];
    return !d ? 0x3F : d <= 15 ? 0x40 + 16 * x + d : 0xC0 + x;
}

/* the order of the piles in the key: by tag (each tag with face-down cards is one pile's),
   then the piles with none by their bottom card (an empty pile first); one deck, so this
   is a total order on the piles of a position, the same whatever pile index holds them */
static int pile_rank(const State *st, int x, int len) {
    return pile_tag(st, x) << 6 | (len > st->down[x] ? st->tab[x][st->down[x]] + 1 : 0);
}

/* the head of the key: the piles sorted, each its tag (and count) and face-up cards, then
   the foundation heights; pile `skip` one card shorter when skip >= 0 (returned_lost) */
static int key_head(const State *st, uint8_t *out, int skip) {
    int order[T], rk[T];
    for (int i = 0; i < T; i++) {
        int len = st->len[i] - (i == skip);
        int r = pile_rank(st, i, len);
        int j = i;
        while (j > 0 && rk[j - 1] > r) {
            order[j] = order[j - 1];
            rk[j] = rk[j - 1];
            j--;
        }
        order[j] = i;
        rk[j] = r;
    }
    int n = 0;
    for (int i = 0; i < T; i++) {
        int x = order[i];
        int len = st->len[x] - (x == skip);
        int d = st->down[x];
        int tag = pile_tag(st, x);
        out[n++] = (uint8_t)tag;
        if (tag >= 0xC0) out[n++] = (uint8_t)d;
        copy_short(out + n, st->tab[x] + d, len - d);
        n += len - d;
    }
    /* four heights of at most 13, four bits each: two bytes */
    out[n++] = (uint8_t)(st->fint >> 8);
    out[n++] = (uint8_t)st->fint;
    return n;
}

/* what of the talon enters the key (KlondikeState.talon_key_of): 0 nothing (draw one,
   unlimited passes), 1 the pointer (draw three, unlimited passes), 2 pointer and recycles */
static int talon_key_of(int draw, int passes) {
    return passes ? 2 : draw == 1 ? 0 : 1;
}

static int make_key(const State *st, uint8_t *out) {
    int n = key_head(st, out, -1);
    if (st->talon_key == 0) return n;
    if (st->talon_key == 1) {
        int p = st->p;
        if (st->pointer_key && (p % st->draw == 0 || p >= st->tn)) p = 0;
        out[n++] = (uint8_t)p;
        return n;
    }
    out[n++] = (uint8_t)st->p;
    for (int i = st->rec_bytes - 1; i >= 0; i--) out[n++] = (uint8_t)(st->rec >> (8 * i));
    return n;
}

/* KlondikeState.safe: with draw three and st->loose (LOOSE_SAFE_DRAW) one rank looser on
   each side, Solvitaire's test (other colour at r-2, the other suit of c's colour at r-3) */
static int safe(const State *st, int c) {
    int r = RANK_[c];
    if (r <= 1) return 1;
    int s = SUIT_[c];
    const int *f = st->found;
    int k = st->loose && st->draw > 1;
    return f[OTHER_COLOUR[s][0]] >= r - 1 - k && f[OTHER_COLOUR[s][1]] >= r - 1 - k &&
           f[SAME_COLOUR[s]] >= r - 2 - k;
}

static mask_t talon_mask(const State *st) {
    mask_t m = 0;
    for (int i = 0; i < st->tn; i++) m |= BIT(st->talon[i]);
    return m;
}

static mask_t buried(const State *st) {
    mask_t out = 0;
    if (st->build) {
        for (int x = 0; x < T; x++)
            for (int i = 0; i < st->down[x]; i++) out |= BIT(st->tab[x][i]);
    } else {
        for (int x = 0; x < T; x++)
            for (int i = 0; i + 1 < st->len[x]; i++) out |= BIT(st->tab[x][i]);
    }
    return out;
}

static int hostable(const State *st, int c, mask_t bur, mask_t tal) {
    if (!st->chain) {
        for (int k = 0; k < NCHI[c]; k++)
            if (!(bur & BIT(CHILDREN_[c][k]))) return 1;
        return 0;
    }
    for (int k = 0; k < NCHI[c]; k++) {
        int e = CHILDREN_[c][k];
        if (bur & BIT(e)) continue;
        if (!(tal & BIT(e)) || hostable(st, e, bur, tal)) return 1;
    }
    return 0;
}

static int worth_lowering(const State *st, int s, mask_t bur, mask_t tal) {
    int h = st->found[s];
    int d = s * 13 + h - 1;
    int chain = st->chain && st->talon_key == 0;
    for (int k = 0; k < NCHI[d]; k++) {
        int e = CHILDREN_[d][k];
        if (!(bur & BIT(e)) && (!chain || !(tal & BIT(e)) || hostable(st, e, bur, tal))) return 1;
    }
    if (h >= 2) {
        for (int k = 0; k < NPAR[d - 1]; k++)
            if (!(bur & BIT(PARENTS_[d - 1][k]))) return 1;
    }
    return 0;
}

static int partial_pays(const State *st, int c, int b, mask_t bur, mask_t reach, mask_t tal) {
    const int *found = st->found;
    if (found[SUIT_[c]] == RANK_[c] - 1) return 1;
    int s = SAME_COLOUR[SUIT_[b]];
    int r = RANK_[b];
    int h = found[s];
    if (h >= r) return h == r;
    int e = s * 13 + r - 1;
    if (bur & BIT(e)) return 0;
    return (reach & BIT(e)) || !(tal & BIT(e));
}

typedef struct {
    int i;
    int deals, recycled, after, rec;
} TTop;

static int talon_tops(const State *st, TTop *out) {
    int n = st->tn;
    if (!n) return 0;
    int draw = st->draw, p = st->p, rec = st->rec;
    int k = 0;
    if (draw == 1) {
        if (p > 0) out[k++] = (TTop){p - 1, 0, 0, 0, rec};
        for (int i = p; i < n; i++) out[k++] = (TTop){i, i - p + 1, 0, 0, rec};
        if (p > 1 && (!st->passes || rec + 1 < st->passes)) {
            int kk = n - p;
            for (int i = 0; i < p - 1; i++) out[k++] = (TTop){i, kk, 1, i + 1, rec + 1};
        }
        return k;
    }
    mask_t got = 0;
    if (p > 0) {
        out[k++] = (TTop){p - 1, 0, 0, 0, rec};
        got |= BIT(p - 1);
    }
    int q = p, kd = 0;
    while (q < n) {
        q = q + draw < n ? q + draw : n;
        kd++;
        out[k++] = (TTop){q - 1, kd, 0, 0, rec};
        got |= BIT(q - 1);
    }
    if (!st->passes || rec + 1 < st->passes) {
        q = 0;
        int k2 = 0;
        while (q < n) {
            q = q + draw < n ? q + draw : n;
            k2++;
            if (!(got & BIT(q - 1))) {
                got |= BIT(q - 1);
                out[k++] = (TTop){q - 1, kd, 1, k2, rec + 1};
            }
        }
    }
    return k;
}

/* ------------------------------------------------------------ the dead test */

/* dead's climb of suit s from height h: past every card that is a top now or lies in the
   talon, queueing each pile whose front card it passes (not yet queued); the new height */
static inline int climb(int s, int h, const int *pile, const uint8_t *top, const int *at,
                        const int *front, uint8_t *queued, int *todo, int *ntodo) {
    int base = s * 13;
    while (h < 13) {
        int c = base + h;
        int y = pile[c];
        if (y >= 0) {
            if (!top[c]) break;
            if (at[c] == front[y] && !queued[y]) {
                queued[y] = 1;
                todo[(*ntodo)++] = y;
            }
        } else if (y == -2) {
            break; /* under the last pass's waste top, not free yet */
        }
        h++;
    }
    return h;
}

/* a pass limit and no recycle left: the waste is a stack (solve_klondike.WASTE_STACK) */
static inline int last_pass(const State *st) {
    return st->waste_stack && st->passes && st->rec + 1 >= st->passes;
}

static int dead(const State *st) {
    int pile[52], at[52], front[T], hs[4];
    uint8_t top[52];
    int newtop[64], nnew = 0;
    int todo[64], ntodo = 0;
    uint8_t queued[T];
    int empties = 0;
    int build = st->build;
    for (int c = 0; c < 52; c++) {
        pile[c] = -1;
        at[c] = 0;
        top[c] = 0;
    }
    for (int y = 0; y < T; y++) {
        const uint8_t *p = st->tab[y];
        int n = st->len[y] - 1;
        front[y] = n;
        if (n >= 0) {
            for (int i = 0; i <= n; i++) {
                pile[p[i]] = y;
                at[p[i]] = i;
            }
            int c = p[n];
            top[c] = 1;
            newtop[nnew++] = c;
        } else {
            empties++;
        }
    }
    /* the last pass's waste (solve_klondike_dead.dead): pile -2 under its free card */
    const uint8_t *waste = st->talon;
    int wf = last_pass(st) ? st->p - 1 : -1;
    for (int i = 0; i < wf; i++) pile[waste[i]] = -2;
    if (empties) {
        for (int k = 0; k < 4; k++) {
            int kc = KINGS[k];
            if (pile[kc] == -1) {
                top[kc] = 1;
                newtop[nnew++] = kc;
            }
        }
    }
    for (int y = 0; y < T; y++) {
        todo[ntodo++] = y;
        queued[y] = 1;
    }
    int done = 0;
    for (int s = 0; s < 4; s++) {
        int h = climb(s, st->found[s], pile, top, at, front, queued, todo, &ntodo);
        hs[s] = h;
        if (h == 13) done++;
    }
    if (done == 4) return 0;
    for (;;) {
        while (nnew) {
            int d = newtop[--nnew];
            int s = SUIT_[d];
            int h = hs[s];
            if (RANK_[d] == h + 1) {
                h = climb(s, h, pile, top, at, front, queued, todo, &ntodo);
                hs[s] = h;
                if (h == 13) {
                    done++;
                    if (done == 4) return 0;
                }
            }
            for (int k = 0; k < NCHI[d]; k++) {
                int e = CHILDREN_[d][k];
                int y = pile[e];
                if (y == -1) {
                    if (!top[e]) {
                        top[e] = 1;
                        newtop[nnew++] = e;
                    }
                } else if (y >= 0 && !queued[y] && at[e] <= front[y]) {
                    queued[y] = 1;
                    todo[ntodo++] = y;
                }
            }
        }
        /* the waste's free card can leave: the one under it is free now */
        int freed = 0;
        while (wf >= 0) {
            int c = waste[wf];
            if (!top[c] && RANK_[c] > hs[SUIT_[c]]) break;
            if (--wf < 0) break;
            int e = waste[wf];
            pile[e] = -1;
            freed = 1;
            if (NPAR[e] ? (top[PARENTS_[e][0]] || top[PARENTS_[e][1]]) : empties) {
                top[e] = 1;
                newtop[nnew++] = e;
            }
            int s = SUIT_[e];
            if (RANK_[e] == hs[s] + 1) {
                int h = climb(s, hs[s], pile, top, at, front, queued, todo, &ntodo);
                hs[s] = h;
                if (h == 13) {
                    done++;
                    if (done == 4) return 0;
                }
            }
        }
        if (freed) continue;
        if (!ntodo) break;
        int y = todo[--ntodo];
        queued[y] = 0;
        const uint8_t *p = st->tab[y];
        int i = front[y];
        int start = i;
        while (i >= 0) {
            int c = p[i];
            if (!top[c]) {
                top[c] = 1;
                newtop[nnew++] = c;
            }
            if (RANK_[c] <= hs[SUIT_[c]]) {
                i--;
                continue;
            }
            if (NPAR[c]) {
                if (top[PARENTS_[c][0]] || top[PARENTS_[c][1]]) {
                    i--;
                    continue;
                }
            } else if (empties) {
                i--;
                continue;
            }
            if (!build) break;
            int low = -1;
            int j = i - 1;
            int dy = st->down[y];
            while (j >= dy) {
                /* p[j] in parents[p[j + 1]] */
                int ch = p[j + 1], pj = p[j];
                int isp = 0;
                for (int k = 0; k < NPAR[ch]; k++)
                    if (PARENTS_[ch][k] == pj) isp = 1;
                if (!isp) break;
                if (NPAR[pj]) {
                    if (top[PARENTS_[pj][0]] || top[PARENTS_[pj][1]]) low = j;
                } else if (empties) {
                    low = j;
                }
                j--;
            }
            if (low < 0) break;
            for (j = low; j < i; j++) {
                if (!top[p[j]]) {
                    top[p[j]] = 1;
                    newtop[nnew++] = p[j];
                }
            }
            i = low - 1;
        }
        if (i != start) {
            front[y] = i;
            if (i < 0) {
                empties++;
                if (empties == 1) {
                    for (int k = 0; k < 4; k++) {
                        int kc = KINGS[k];
                        if (pile[kc] == -1 && !top[kc]) {
                            top[kc] = 1;
                            newtop[nnew++] = kc;
                        }
                    }
                    for (int z = 0; z < T; z++) {
                        if (!queued[z]) {
                            queued[z] = 1;
                            todo[ntodo++] = z;
                        }
                    }
                }
            }
        }
    }
    return 1;
}

static int in_tableau(const State *st, int c) {
    for (int x = 0; x < T; x++)
        for (int i = 0; i < st->len[x]; i++)
            if (st->tab[x][i] == c) return 1;
    return 0;
}

static int all_piles(const State *st) {
    for (int x = 0; x < T; x++)
        if (!st->len[x]) return 0;
    return 1;
}

static int stays_alive(const State *st, int c, int placed) {
    int r = RANK_[c];
    if (placed) {
        if (st->found[SUIT_[c]] == r - 1) {
            for (int x = 0; x < T; x++)
                if (st->len[x] && st->tab[x][st->len[x] - 1] == c) return 1;
        }
    } else {
        int all = 1;
        for (int k = 0; k < NCHI[c]; k++)
            if (!(st->found[SUIT_[CHILDREN_[c][k]]] >= r - 1)) all = 0;
        if (all) return 1;
    }
    if (r == 13) return !all_piles(st);
    mask_t tops = 0;
    for (int x = 0; x < T; x++)
        if (st->len[x]) tops |= BIT(st->tab[x][st->len[x] - 1]);
    for (int k = 0; k < NPAR[c]; k++) {
        int d = PARENTS_[c][k];
        if (tops & BIT(d)) return 1;
        if (RANK_[d] > st->found[SUIT_[d]] && in_tableau(st, d)) continue;
        if (RANK_[d] == 13) {
            if (!all_piles(st)) return 1;
            continue;
        }
        for (int kk = 0; kk < NPAR[d]; kk++) {
            int e = PARENTS_[d][kk];
            if (tops & BIT(e)) return 1;
            if (RANK_[e] == 13 && !all_piles(st) && !in_tableau(st, e)) return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ move generation */

#define GROUPS 7

static Move mk(int kind, int a, int b, int n, int c) {
    Move m = {(int8_t)kind, (int8_t)a, (int8_t)b, (int8_t)n, (int8_t)c, 0, 0, 0, 0};
    return m;
}

static Move mk_talon(int kind, const TTop *t, int b, int c) {
    Move m = {(int8_t)kind, (int8_t)t->i, (int8_t)b, 1, (int8_t)c, t->deals, t->recycled, t->after, t->rec};
    return m;
}

typedef struct {
    Move v[GROUPS][160];
    int n[GROUPS];
} Groups;

#define ADD(g, m) (G->v[g][G->n[g]++] = (m))
enum { G_REVEAL_HOME, G_REVEAL, G_HOME, G_TALON_HOME, G_FROM_TALON, G_OTHER, G_BACK };

/* append the moves of the position (after move `last`, or the start when NULL) to mv */
static int gen_moves(State *st, const Move *last, MoveVec *mv, Groups *G) {
    int suspect = 1;
    if (last) {
        int kind = last->kind;
        if ((kind == WT || kind == WF) && (last->deals || last->recycled) && last_pass(st))
            suspect = 1; /* cards put under the last pass's waste top (may_be_dead) */
        else
            suspect = (kind == TT || kind == TF || kind == WT || kind == FT) &&
                      !stays_alive(st, last->c, kind != TF);
    }
    if (suspect && dead(st)) return 0;
    int tops[52];
    for (int c = 0; c < 52; c++) tops[c] = -1;
    int empty = -1;
    for (int y = 0; y < T; y++) {
        if (st->len[y])
            tops[st->tab[y][st->len[y] - 1]] = y;
        else if (empty < 0)
            empty = y;
    }
    const int *found = st->found;
    for (int x = 0; x < T; x++) {
        if (st->len[x]) {
            int c = st->tab[x][st->len[x] - 1];
            if (found[SUIT_[c]] == RANK_[c] - 1 && safe(st, c))
                return mv_push(mv, mk(TF, x, 0, 1, c));
        }
    }
    TTop tt[160];
    int ntt = talon_tops(st, tt);
    if (st->draw == 1) {
        for (int k = 0; k < ntt; k++) {
            if (tt[k].recycled && st->passes) continue;
            if (tt[k].deals && st->talon_key != 0) continue;
            int c = st->talon[tt[k].i];
            if (found[SUIT_[c]] == RANK_[c] - 1 && safe(st, c))
                return mv_push(mv, mk_talon(WF, &tt[k], 0, c));
        }
    }
    for (int g = 0; g < GROUPS; g++) G->n[g] = 0;
    int build = st->build;
    mask_t bur = buried(st);
    mask_t tal = talon_mask(st);
    mask_t reach = 0;
    if (build)
        for (int k = 0; k < ntt; k++) reach |= BIT(st->talon[tt[k].i]);
    for (int x = 0; x < T; x++) {
        int len = st->len[x];
        if (!len) continue;
        const uint8_t *p = st->tab[x];
        int c = p[len - 1];
        int dx = st->down[x];
        int up = len - dx;
        if (found[SUIT_[c]] == RANK_[c] - 1)
            ADD((up == 1 && dx) ? G_REVEAL_HOME : G_HOME, mk(TF, x, 0, 1, c));
        if (!build) {
            for (int k = 0; k < NPAR[c]; k++) {
                int y = tops[PARENTS_[c][k]];
                if (y >= 0) ADD((up == 1 && dx) ? G_REVEAL : G_OTHER, mk(TT, x, y, 1, c));
            }
            if (empty >= 0 && RANK_[c] == 13 && (dx || len > 1))
                ADD((up == 1 && dx) ? G_REVEAL : G_OTHER, mk(TT, x, empty, 1, c));
            continue;
        }
        int run = 1;
        int i = len - 1;
        while (run < up && RED_[p[i]] != RED_[p[i - 1]] && RANK_[p[i]] + 1 == RANK_[p[i - 1]]) {
            run++;
            i--;
        }
        int rt = RANK_[c];
        for (int y = 0; y < T; y++) {
            if (y == x) continue;
            if (st->len[y]) {
                int d = st->tab[y][st->len[y] - 1];
                int n = RANK_[d] - rt;
                if (1 <= n && n <= run && RED_[p[len - n]] != RED_[d] &&
                    (n == up || n == run || !st->twin ||
                     partial_pays(st, p[len - n - 1], p[len - n], bur, reach, tal)))
                    ADD((n == up && dx) ? G_REVEAL : G_OTHER, mk(TT, x, y, n, c));
            } else if (y == empty) {
                int n = 14 - rt;
                if (n <= run && (dx || n < len))
                    ADD((n == up && dx) ? G_REVEAL : G_OTHER, mk(TT, x, y, n, c));
            }
        }
    }
    int defer = st->talon_key == 0;
    for (int k = 0; k < ntt; k++) {
        int c = st->talon[tt[k].i];
        if (found[SUIT_[c]] == RANK_[c] - 1 &&
            (!defer || !st->defer_home || RANK_[c] == 13 || !(bur & BIT(c + 1))))
            ADD(G_TALON_HOME, mk_talon(WF, &tt[k], 0, c));
        if (defer && !hostable(st, c, bur, tal)) continue;
        for (int j = 0; j < NPAR[c]; j++) {
            int y = tops[PARENTS_[c][j]];
            if (y >= 0) ADD(G_FROM_TALON, mk_talon(WT, &tt[k], y, c));
        }
        if (empty >= 0 && RANK_[c] == 13) ADD(G_FROM_TALON, mk_talon(WT, &tt[k], empty, c));
    }
    for (int s = 0; s < 4; s++) {
        int h = found[s];
        int c = s * 13 + h - 1;
        if (h && !safe(st, c) && worth_lowering(st, s, bur, tal)) {
            for (int j = 0; j < NPAR[c]; j++) {
                int y = tops[PARENTS_[c][j]];
                if (y >= 0) ADD(G_BACK, mk(FT, s, y, 1, c));
            }
            if (empty >= 0 && h == 13) ADD(G_BACK, mk(FT, s, empty, 1, c));
        }
    }
    for (int g = 0; g < GROUPS; g++) {
        int n = G->n[g];
        if (st->use_rng && n > 1) {
            Move *x = G->v[g];
            for (int i = n - 1; i >= 1; i--) {
                int j = (int)mt_below(&st->rng, (unsigned)(i + 1));
                Move t = x[i];
                x[i] = x[j];
                x[j] = t;
            }
        }
        for (int i = 0; i < n; i++)
            if (mv_push(mv, G->v[g][i]) < 0) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ apply / undo */

/* returns the undo word: the flip flag (tableau moves) or p << 16 | rec (talon moves) */
static int apply_move(State *st, const Move *m) {
    int kind = m->kind, a = m->a, b = m->b, n = m->n, c = m->c;
    if (kind == TT || kind == TF) {
        if (kind == TT) {
            memcpy(st->tab[b] + st->len[b], st->tab[a] + st->len[a] - n, (size_t)n);
            st->len[b] += n;
            st->len[a] -= n;
        } else {
            st->len[a]--;
            int s = SUIT_[c];
            st->found[s]++;
            st->fint += 1 << 4 * s;
        }
        int d = st->down[a];
        if (d && st->len[a] == d) {
            st->down[a] = d - 1;
            return 1;
        }
        return 0;
    }
    if (kind == WT || kind == WF) {
        int u = st->p << 16 | st->rec;
        memmove(st->talon + a, st->talon + a + 1, (size_t)(st->tn - a - 1));
        st->tn--;
        st->p = a;
        st->rec = m->rec;
        if (kind == WT) {
            st->tab[b][st->len[b]++] = (uint8_t)c;
        } else {
            int s = SUIT_[c];
            st->found[s]++;
            st->fint += 1 << 4 * s;
        }
        return u;
    }
    st->found[a]--;
    st->fint -= 1 << 4 * a;
    st->tab[b][st->len[b]++] = (uint8_t)c;
    return 0;
}

static void undo_move(State *st, const Move *m, int u) {
    int kind = m->kind, a = m->a, b = m->b, n = m->n, c = m->c;
    if (kind == TT || kind == TF) {
        if (u) st->down[a]++;
        if (kind == TT) {
            memcpy(st->tab[a] + st->len[a], st->tab[b] + st->len[b] - n, (size_t)n);
            st->len[a] += n;
            st->len[b] -= n;
        } else {
            st->tab[a][st->len[a]++] = (uint8_t)c;
            int s = SUIT_[c];
            st->found[s]--;
            st->fint -= 1 << 4 * s;
        }
        return;
    }
    if (kind == WT || kind == WF) {
        memmove(st->talon + a + 1, st->talon + a, (size_t)(st->tn - a));
        st->talon[a] = (uint8_t)c;
        st->tn++;
        st->p = u >> 16;
        st->rec = u & 0xFFFF;
        if (kind == WT) {
            st->len[b]--;
        } else {
            int s = SUIT_[c];
            st->found[s]--;
            st->fint -= 1 << 4 * s;
        }
        return;
    }
    st->found[a]++;
    st->fint += 1 << 4 * a;
    st->len[b]--;
}

static int trivially_won(const State *st) {
    for (int x = 0; x < T; x++)
        if (st->down[x]) return 0;
    if (st->tn && st->talon_key != 0) return 0;
    for (int x = 0; x < T; x++)
        for (int i = 1; i < st->len[x]; i++)
            if (RANK_[st->tab[x][i]] >= RANK_[st->tab[x][i - 1]]) return 0;
    return 1;
}

static int won(const State *st) { return st->fint == FULL || trivially_won(st); }

static int returned_lost(State *st, const Seen *seen) {
    /* the keys first, their slots prefetched, then the look-ups: the misses overlap */
    uint8_t k[T][KEYMAX];
    int kn[T];
    uint32_t h[T];
    int m = 0;
    for (int x = 0; x < T; x++) {
        int n = st->len[x];
        if (!n || !(st->from_talon & BIT(st->tab[x][n - 1]))) continue;
        if (n - st->down[x] >= 2 || (n == 1 && RANK_[st->tab[x][0]] == 13)) {
            kn[m] = key_head(st, k[m], x);
            h[m] = hash_bytes(k[m], kn[m]);
            __builtin_prefetch(&seen->slot[h[m] & seen->mask]);
            m++;
        }
    }
    for (int i = 0; i < m; i++) {
        int64_t e = seen_find(seen, k[i], kn[i], h[i]);
        if (e >= 0 && REC_VALUE(seen, e) == PROVED_LOST) return 1;
    }
    return 0;
}

/* the key of B, A's head (pile `skip` one card shorter) with the talon pointer q of a talon of
   tn cards, normalised as make_key does; the length */
static int key_with_pointer(const State *st, const uint8_t *head, int hn, int q, int tn,
                            uint8_t *out) {
    memcpy(out, head, (size_t)hn);
    if (st->pointer_key && (q % st->draw == 0 || q >= tn)) q = 0;
    out[hn] = (uint8_t)q;
    return hn + 1;
}

static int lost_key(const Seen *seen, const uint8_t *k, int n) {
    return seen_get(seen, k, n) == PROVED_LOST;
}

/* Draw three (or more), unlimited passes: A is lost when B, A with a tableau top c back in the
   talon, is proved lost. c came from the talon (was there at the start), lies on a face-up
   card d (or is a King alone on its pile), and A's pointer is the index i c takes when put
   back among the talon cards in their order (the index a play of c from the talon leaves
   the pointer at). B: the piles with c off, c at index i of the talon, a pointer q from
   which c can be dealt to the waste top (q = i + 1: c on top of the waste; q = 0 when a
   pointer at 0 reaches c: i + 1 a multiple of the draw, or c the last card). From B, c is
   played from the talon onto d (into the empty pile), which leaves the pointer at i, the
   rest of the talon in its order: A. So a win from A is one from B (proof in
   docs/SOLVABILITY.md, twelfth pass). */
static int returned3_lost(State *st, const Seen *seen) {
    int d = st->draw, tn = st->tn;
    for (int x = 0; x < T; x++) {
        int n = st->len[x];
        if (!n) continue;
        int c = st->tab[x][n - 1];
        if (!(st->from_talon & BIT(c))) continue;
        if (!(n - st->down[x] >= 2 || (n == 1 && RANK_[st->tab[x][0]] == 13))) continue;
        int i = 0;
        for (int j = 0; j < tn; j++) i += st->orig_at[st->talon[j]] < st->orig_at[c];
        if (st->p != i) continue;
        uint8_t head[KEYMAX], k[KEYMAX];
        int hn = key_head(st, head, x);
        int kn = key_with_pointer(st, head, hn, i + 1, tn + 1, k);
        if (lost_key(seen, k, kn)) return 1;
        if (i % d == d - 1 || i == tn) {
            kn = key_with_pointer(st, head, hn, 0, tn + 1, k);
            if (lost_key(seen, k, kn)) return 1;
        }
    }
    return 0;
}

/* Draw one with a pass limit and RELAXED (solve_klondike.KlondikeState.pass_dominated):
   the position is lost when the same one with unlimited passes is proved lost there (a
   relaxation: every line here is a line there); its key there is this key without the
   pointer and the recycles (its last 1 + rec_bytes bytes). */
static int pass_dominated(const State *st, const uint8_t *key, int kn) {
    return st->relaxed && seen_get(st->relaxed, key, kn - 1 - st->rec_bytes) == PROVED_LOST;
}

static int dominated(State *st, const uint8_t *key, int kn, const Seen *seen) {
    if (st->talon_key == 0) return st->returned && returned_lost(st, seen);
    if (st->talon_key == 2) return pass_dominated(st, key, kn);
    if (st->returned3 && st->talon_key == 1 && returned3_lost(st, seen)) return 1;
    if (!st->dominance || st->talon_key != 1) return 0;
    uint8_t k[KEYMAX];
    memcpy(k, key, (size_t)kn);
    int n = st->tn, p = key[kn - 1], d = st->draw;
    if (p == 0) {
        for (int q = 1; q < n; q++) {
            if (!(q % d)) continue;
            k[kn - 1] = (uint8_t)q;
            if (seen_get(seen, k, kn) == PROVED_LOST) return 1;
        }
    } else {
        for (int q = p % d; q < p; q += d) {
            k[kn - 1] = (uint8_t)q;
            if (seen_get(seen, k, kn) == PROVED_LOST) return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ search_run */

typedef struct {
    int start, count, next; /* the frame's moves in the MoveVec */
    int low;
    uint32_t entry; /* the frame's position in seen */
} Frame;

typedef struct {
    Frame *f;
    int n, cap;
    Move *path;
    int *pundo;
    int np, pcap;
    uint32_t *comp;
    size_t ncomp, ccap;
    MoveVec mv;
    Groups G;
} Work;

static int work_frame(Work *w) {
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 256;
        Frame *f = realloc(w->f, (size_t)cap * sizeof(Frame));
        if (!f) return -1;
        w->f = f;
        w->cap = cap;
    }
    return 0;
}

static int work_path(Work *w, const Move *m, int u) {
    if (w->np == w->pcap) {
        int cap = w->pcap ? w->pcap * 2 : 256;
        Move *p = realloc(w->path, (size_t)cap * sizeof(Move));
        if (!p) return -1;
        w->path = p;
        int *q = realloc(w->pundo, (size_t)cap * sizeof(int));
        if (!q) return -1;
        w->pundo = q;
        w->pcap = cap;
    }
    w->path[w->np] = *m;
    w->pundo[w->np] = u;
    w->np++;
    return 0;
}

static int work_comp(Work *w, uint32_t e) {
    if (w->ncomp == w->ccap) {
        size_t cap = w->ccap ? w->ccap * 2 : 1024;
        uint32_t *c = realloc(w->comp, cap * sizeof(uint32_t));
        if (!c) return -1;
        w->comp = c;
        w->ccap = cap;
    }
    w->comp[w->ncomp++] = e;
    return 0;
}

/* a Work's buffers and the Work itself (NULL: nothing) */
static void work_free(Work *w) {
    if (!w) return;
    free(w->f);
    free(w->path);
    free(w->pundo);
    free(w->comp);
    free(w->mv.v);
    free(w);
}

/* one run (solve_common.search_run); the path of a win stays in w->path */
static int search_run(State *st, long budget, Seen *seen, Work *w, long *nodes_out) {
    uint8_t key[KEYMAX];
    *nodes_out = 0;
    w->n = 0;
    w->np = 0;
    w->ncomp = 0;
    w->mv.n = 0;
    int kn = make_key(st, key);
    if (seen_get(seen, key, kn) == PROVED_LOST) return V_LOST;
    if (won(st)) return V_WON;
    if (budget < 1) return V_UNKNOWN;
    int index = 0;
    int64_t e0 = seen_set(seen, key, kn, index);
    if (e0 < 0 || work_comp(w, (uint32_t)e0) < 0 || work_frame(w) < 0) return V_NOMEM;
    if (gen_moves(st, NULL, &w->mv, &w->G) < 0) return V_NOMEM;
    w->f[0] = (Frame){0, w->mv.n, 0, index, (uint32_t)e0};
    w->n = 1;
    long nodes = 1;
    while (w->n) {
        Frame *fr = &w->f[w->n - 1];
        if (fr->next == fr->count) {
            /* the frame is finished: complete its component or pass its lowlink up */
            int lk = fr->low;
            uint32_t ek = fr->entry;
            w->mv.n = fr->start;
            w->n--;
            int i = REC_VALUE(seen, ek);
            if (lk == i) {
                for (;;) {
                    uint32_t x = w->comp[--w->ncomp];
                    REC_VALUE(seen, x) = PROVED_LOST;
                    if (x == ek) break;
                }
            } else if (w->n && lk < w->f[w->n - 1].low) {
                w->f[w->n - 1].low = lk;
            }
            if (w->np) {
                w->np--;
                undo_move(st, &w->path[w->np], w->pundo[w->np]);
            }
            continue;
        }
        if (++st->tick >= SIGNAL_EVERY) {
            st->tick = 0;
            PyEval_RestoreThread(st->ts);
            int r = PyErr_CheckSignals();
            st->ts = PyEval_SaveThread();
            if (r < 0) return V_SIGNAL;
            fr = &w->f[w->n - 1];
        }
        Move m = w->mv.v[fr->start + fr->next];
        fr->next++;
        int u = apply_move(st, &m);
        kn = make_key(st, key);
        uint32_t h = hash_bytes(key, kn);
        int64_t e = seen_find(seen, key, kn, h);
        int j = e < 0 ? ABSENT : REC_VALUE(seen, e);
        if (j != ABSENT) {
            undo_move(st, &m, u);
            if (j != PROVED_LOST && j < fr->low) fr->low = j;
            continue;
        }
        if (won(st)) {
            if (work_path(w, &m, u) < 0) return V_NOMEM;
            *nodes_out = nodes;
            return V_WON;
        }
        if (dominated(st, key, kn, seen)) {
            /* the look-up above found no record or one a run's cut left ABSENT */
            if (e >= 0)
                REC_VALUE(seen, e) = PROVED_LOST;
            else if (seen_add(seen, key, kn, h, PROVED_LOST) < 0)
                return V_NOMEM;
            undo_move(st, &m, u);
            continue;
        }
        if (nodes >= budget) {
            undo_move(st, &m, u);
            for (size_t x = 0; x < w->ncomp; x++) REC_VALUE(seen, w->comp[x]) = ABSENT;
            w->ncomp = 0;
            while (w->np) {
                w->np--;
                undo_move(st, &w->path[w->np], w->pundo[w->np]);
            }
            *nodes_out = nodes;
            return V_UNKNOWN;
        }
        nodes++;
        index++;
        if (e >= 0)
            REC_VALUE(seen, e) = index;
        else
            e = seen_add(seen, key, kn, h, index);
        if (e < 0 || work_comp(w, (uint32_t)e) < 0 || work_frame(w) < 0) return V_NOMEM;
        if (work_path(w, &m, u) < 0) return V_NOMEM;
        int start = w->mv.n;
        if (gen_moves(st, &m, &w->mv, &w->G) < 0) return V_NOMEM;
        w->f[w->n] = (Frame){start, w->mv.n - start, 0, index, (uint32_t)e};
        w->n++;
    }
    *nodes_out = nodes;
    return V_LOST;
}

static long luby(long i) {
    long k = 1;
    while ((1L << k) - 1 < i) k++;
    while ((1L << k) - 1 != i) {
        i -= (1L << (k - 1)) - 1;
        k = 1;
        while ((1L << k) - 1 < i) k++;
    }
    return 1L << (k - 1);
}

typedef struct {
    long first_run, first_run_short;
    double growth, growth_short;
    int luby;
} Schedule;

/* a search's runs (solve_klondike.Runs): each a seeded order but the first, of growing size */
typedef struct {
    State *st;
    Seen seen;
    Work *w;
    long run, size, nodes;
    double growth;
    int shrt, luby;
} Runs;

static int runs_init(Runs *r, State *st, Work *w, const Schedule *sc) {
    memset(r, 0, sizeof(*r));
    r->st = st;
    r->w = w;
    r->shrt = !st->passes;
    r->size = r->shrt ? sc->first_run_short : sc->first_run;
    r->growth = r->shrt ? sc->growth_short : sc->growth;
    r->luby = sc->luby;
    return seen_init(&r->seen);
}

/* the next run, of at most `left` positions */
static int runs_next(Runs *r, long left, const Schedule *sc) {
    State *st = r->st;
    st->use_rng = r->run != 0;
    if (r->run) mt_seed(&st->rng, (uint32_t)r->run);
    long n = 0;
    int verdict = search_run(st, r->size < left ? r->size : left, &r->seen, r->w, &n);
    r->nodes += n;
    r->run++;
    if (r->luby && r->shrt) {
        r->size = sc->first_run_short * luby(r->run + 1);
    } else {
        long g = (long)((double)r->size * r->growth);
        r->size = r->size + 1 > g ? r->size + 1 : g;
    }
    return verdict;
}

/* Draw one with a pass limit and RELAXED (solve_klondike._solve_relaxed): the same deal with
   unlimited passes is searched beside this one, turn about (this one first, the other while
   it has expanded fewer positions); its loss is this one's, and its positions proved lost
   are lost here (pass_dominated). Once it is won it stops, and this search has the rest of
   the budget. */
static int solve_relaxed(State *st, long budget, const Schedule *sc, Work *w, long *nodes_out) {
    State *u = malloc(sizeof(State));
    Work *wu = calloc(1, sizeof(Work));
    Runs ru, rp;
    int verdict = V_NOMEM;
    memset(&ru, 0, sizeof(Runs));
    memset(&rp, 0, sizeof(Runs));
    if (!u || !wu) goto out;
    *u = *st;
    u->passes = 0;
    u->talon_key = talon_key_of(u->draw, 0);
    u->relaxed = NULL;
    if (runs_init(&ru, u, wu, sc) < 0 || runs_init(&rp, st, w, sc) < 0) goto out;
    st->relaxed = &ru.seen;
    int open = 1; /* the unlimited search is neither won nor stopped */
    for (;;) {
        long left = budget - ru.nodes - rp.nodes;
        if (open && ru.nodes < rp.nodes) {
            u->ts = st->ts;
            verdict = runs_next(&ru, left, sc);
            st->ts = u->ts;
            if (verdict == V_NOMEM || verdict == V_SIGNAL || verdict == V_LOST) break;
            if (verdict == V_WON) open = 0;
        } else {
            verdict = runs_next(&rp, left, sc);
            if (verdict != V_UNKNOWN) break;
        }
        if (ru.nodes + rp.nodes >= budget) {
            verdict = V_UNKNOWN;
            break;
        }
    }
out:
    if (verdict == V_LOST) w->np = 0; /* lost with unlimited passes: no path here */
    st->relaxed = NULL;
    *nodes_out = ru.nodes + rp.nodes;
    seen_free(&ru.seen);
    seen_free(&rp.seen);
    work_free(wu);
    free(u);
    return verdict;
}

static int solve(State *st, long budget, const Schedule *sc, Work *w, long *nodes_out) {
    if (st->passes && st->draw == 1 && st->relax)
        return solve_relaxed(st, budget, sc, w, nodes_out);
    Runs r;
    int verdict = V_NOMEM;
    if (runs_init(&r, st, w, sc) == 0) {
        do verdict = runs_next(&r, budget - r.nodes, sc);
        while (verdict == V_UNKNOWN && r.nodes < budget);
    }
    seen_free(&r.seen);
    *nodes_out = r.nodes;
    return verdict;
}

/* ------------------------------------------------------------ Python entry */

static int read_ints(PyObject *seq, int *out, int max, const char *what) {
    PyObject *f = PySequence_Fast(seq, what);
    if (!f) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
    if (n > max) {
        Py_DECREF(f);
        PyErr_Format(PyExc_ValueError, "%s: too many items", what);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(f, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(f);
            return -1;
        }
        out[i] = (int)v;
    }
    Py_DECREF(f);
    return (int)n;
}

static int read_cards(PyObject *seq, uint8_t *out, const char *what) {
    int v[52];
    int n = read_ints(seq, v, 52, what);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] > 51) {
            PyErr_Format(PyExc_ValueError, "%s: not a card", what);
            return -1;
        }
        out[i] = (uint8_t)v[i];
    }
    return n;
}

PyDoc_STRVAR(solve_doc,
             "solve(tab, down, found, talon, p, rec, draw, build, passes, budget, flags, schedule)\n"
             "-> (verdict, path, nodes)\n\n"
             "solve_klondike's restarting search from the position given by its fields:\n"
             "tab: 7 lists of cards bottom to top, down: 7 face-down counts, found: 4 heights\n"
             "by suit, talon: waste then stock cards, p: the waste's length, rec: recycles made;\n"
             "flags: (DEFER_HOME, CHAIN, TWIN, POINTER_KEY, DOMINANCE, RETURNED[, RETURNED_DRAW,\n"
             "LOOSE_SAFE_DRAW, RELAXED, WASTE_STACK]); schedule:\n"
             "(FIRST_RUN, GROWTH, FIRST_RUN_SHORT, GROWTH_SHORT, LUBY). verdict is 'won',\n"
             "'lost' or 'unknown'; path lists the moves (kind, a, b, n, c, macro) of a win up\n"
             "to a trivially won position.");

static PyObject *py_solve(PyObject *self, PyObject *args) {
    PyObject *tab, *down, *found, *talon, *flags, *sched;
    int p, rec, draw, build, passes;
    long budget;
    if (!PyArg_ParseTuple(args, "OOOOiiipilOO", &tab, &down, &found, &talon, &p, &rec, &draw,
                          &build, &passes, &budget, &flags, &sched))
        return NULL;
    State *st = calloc(1, sizeof(State));
    Work *w = calloc(1, sizeof(Work));
    if (!st || !w) {
        free(st);
        free(w);
        return PyErr_NoMemory();
    }
    PyObject *result = NULL;
    {
        PyObject *tf = PySequence_Fast(tab, "tab");
        if (!tf) goto done;
        if (PySequence_Fast_GET_SIZE(tf) != T) {
            Py_DECREF(tf);
            PyErr_SetString(PyExc_ValueError, "tab: 7 piles");
            goto done;
        }
        int total = 0;
        for (int x = 0; x < T; x++) {
            int n = read_cards(PySequence_Fast_GET_ITEM(tf, x), st->tab[x], "pile");
            if (n < 0) {
                Py_DECREF(tf);
                goto done;
            }
            st->len[x] = n;
            total += n;
        }
        Py_DECREF(tf);
        if (read_ints(down, st->down, T, "down") != T) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "down: 7 counts");
            goto done;
        }
        if (read_ints(found, st->found, 4, "found") != 4) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "found: 4 heights");
            goto done;
        }
        int tn = read_cards(talon, st->talon, "talon");
        if (tn < 0) goto done;
        st->tn = tn;
        (void)total;
        int fl[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        int nfl = read_ints(flags, fl, 10, "flags");
        if (nfl < 6) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "flags: 6 to 10 items");
            goto done;
        }
        st->relax = fl[8];
        st->waste_stack = fl[9];
        st->loose = fl[7];
        st->returned3 = fl[6];
        st->defer_home = fl[0];
        st->chain = fl[1];
        st->twin = fl[2];
        st->pointer_key = fl[3];
        st->dominance = fl[4];
        st->returned = fl[5];
        PyObject *sf = PySequence_Fast(sched, "schedule");
        if (!sf) goto done;
        if (PySequence_Fast_GET_SIZE(sf) != 5) {
            Py_DECREF(sf);
            PyErr_SetString(PyExc_ValueError, "schedule: 5 items");
            goto done;
        }
        Schedule sc;
        sc.first_run = PyLong_AsLong(PySequence_Fast_GET_ITEM(sf, 0));
        sc.growth = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(sf, 1));
        sc.first_run_short = PyLong_AsLong(PySequence_Fast_GET_ITEM(sf, 2));
        sc.growth_short = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(sf, 3));
        sc.luby = PyObject_IsTrue(PySequence_Fast_GET_ITEM(sf, 4));
        Py_DECREF(sf);
        if (PyErr_Occurred()) goto done;
        for (int x = 0; x < T; x++) {
            if (st->down[x] < 0 || st->down[x] > st->len[x]) {
                PyErr_SetString(PyExc_ValueError, "down: a count within its pile");
                goto done;
            }
        }
        st->p = p;
        st->rec = rec;
        st->draw = draw;
        st->build = build;
        st->passes = passes;
        if (draw < 1 || p < 0 || p > tn || rec < 0 || rec > 0xFFFF) {
            PyErr_SetString(PyExc_ValueError, "draw, p or rec out of range");
            goto done;
        }
        st->fint = 0;
        for (int s = 0; s < 4; s++) st->fint += st->found[s] << 4 * s;
        st->from_talon = talon_mask(st);
        for (int j = 0; j < tn; j++) st->orig_at[st->talon[j]] = (uint8_t)j;
        st->talon_key = talon_key_of(draw, passes);
        st->rec_bytes = passes <= 256 ? 1 : passes <= 65536 ? 2 : 4;
        long nodes = 0;
        int verdict;
        st->ts = PyEval_SaveThread();
        verdict = solve(st, budget, &sc, w, &nodes);
        PyEval_RestoreThread(st->ts);
        if (verdict == V_SIGNAL) goto done; /* the handler's exception is set */
        if (verdict == V_NOMEM) {
            PyErr_NoMemory();
            goto done;
        }
        PyObject *path = PyList_New(verdict == V_WON ? w->np : 0);
        if (!path) goto done;
        if (verdict == V_WON) {
            for (int i = 0; i < w->np; i++) {
                const Move *m = &w->path[i];
                PyObject *t = Py_BuildValue("(iiiii(iiii))", m->kind, m->a, m->b, m->n, m->c,
                                            m->deals, m->recycled, m->after, m->rec);
                if (!t) {
                    Py_DECREF(path);
                    goto done;
                }
                PyList_SET_ITEM(path, i, t);
            }
        }
        const char *v = verdict == V_WON ? "won" : verdict == V_LOST ? "lost" : "unknown";
        result = Py_BuildValue("(sNl)", v, path, nodes);
    }
done:
    work_free(w);
    free(st);
    return result;
}

PyDoc_STRVAR(seed_doc, "mt_words(seed, n) -> the first n 32-bit outputs of random.Random(seed) (tests)");

static PyObject *py_mt_words(PyObject *self, PyObject *args) {
    unsigned long seed;
    int n;
    if (!PyArg_ParseTuple(args, "ki", &seed, &n)) return NULL;
    MT m;
    mt_seed(&m, (uint32_t)seed);
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) PyList_SET_ITEM(out, i, PyLong_FromUnsignedLong(mt_next(&m)));
    return out;
}

static PyObject *py_table_sizes(PyObject *self, PyObject *args) {
    Py_ssize_t big, first;
    if (!PyArg_ParseTuple(args, "nn", &big, &first)) return NULL;
    if (big < 4096 || first < 4096 || (first & (first - 1))) {
        PyErr_SetString(PyExc_ValueError,
                        "table_sizes: at least 4096 bytes each, the first size a power of 2");
        return NULL;
    }
    PyObject *old = Py_BuildValue("nn", (Py_ssize_t)BIG, (Py_ssize_t)FIRST);
    BIG = (size_t)big;
    FIRST = (size_t)first;
    return old;
}

static PyObject *py_arena_step(PyObject *self, PyObject *args) {
    Py_ssize_t step;
    if (!PyArg_ParseTuple(args, "n", &step)) return NULL;
    if (step < 4096) {
        PyErr_SetString(PyExc_ValueError, "arena_step: at least 4096 bytes");
        return NULL;
    }
    PyObject *old = PyLong_FromSsize_t((Py_ssize_t)STEP);
    STEP = (size_t)step;
    return old;
}

PyDoc_STRVAR(step_doc,
             "arena_step(step) -> the old step: a visited set's arena doubles up to step bytes, "
             "then grows step bytes at a time (1 GiB by default). For the tests, between "
             "searches only.");

static PyObject *py_arena_caps(PyObject *self, PyObject *args) {
    unsigned long long need;
    if (!PyArg_ParseTuple(args, "K", &need)) return NULL;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    size_t cap = 0;
    while (cap < need) {
        size_t next = arena_next(cap);
        if (next == cap) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        cap = next;
        PyObject *v = PyLong_FromSize_t(cap);
        if (!v || PyList_Append(out, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(v);
    }
    return out;
}

PyDoc_STRVAR(caps_doc,
             "arena_caps(need) -> the capacities in bytes a visited set's arena takes, from its "
             "first, until it holds need bytes of records; None when need is past the most "
             "records can address (16 GiB).");

PyDoc_STRVAR(sizes_doc,
             "table_sizes(big, first) -> the old (big, first): tables of big bytes or more are "
             "mapped in huge pages (Linux; 2 MiB by default), and each visited set's tables "
             "start at first bytes (the arena; its slots half that; 1 MiB by default). For "
             "the tests, between searches only.");

static PyMethodDef methods[] = {
    {"solve", py_solve, METH_VARARGS, solve_doc},
    {"table_sizes", py_table_sizes, METH_VARARGS, sizes_doc},
    {"arena_step", py_arena_step, METH_VARARGS, step_doc},
    {"arena_caps", py_arena_caps, METH_VARARGS, caps_doc},
    {"mt_words", py_mt_words, METH_VARARGS, seed_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_solve_klondike_c",
    "The Klondike solver's search in C (an exact port of solve_klondike's; see its docstring).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__solve_klondike_c(void) {
    init_tables();
    return PyModule_Create(&module);
}
