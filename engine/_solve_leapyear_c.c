/* Leap Year's search in C (engine/solve_leapyear.py documents the rules it relies on).
 *
 * The position is the eight piles as ranks, the stock (first-dealt card first) and how
 * many foundations show each rank. Each pile's cards, now and to come, are one fixed
 * sequence: the cards it holds now (bottom to top), then the stock cards the deals will
 * put on it. A position is therefore the number of deals made and, per pile, the set of
 * that sequence's cards still in the pile (a bit mask): the key. Every move plays a card
 * or deals, so no position repeats along a line: the graph is acyclic, and a position
 * whose every move has been searched without a win is lost. The table keeps every
 * position entered; a run cut by its budget takes out the positions still on its stack
 * (unfinished), so what stays in the table is proved lost and later runs share it.
 *
 * Prunings, each proved in solve_leapyear.py's docstring: the safe play (a rank-r top
 * when at least as many foundations show r-1 as rank-r cards are left is the only move)
 * and the dead test (the least closed set of playable cards misses one: no moves).
 * Restarts: runs of growing size, run 0 in the order "tallest pile first, deal last",
 * later runs in a pseudo-random order of the plays (xorshift32 seeded by the run's number;
 * deal last), and each odd run tries first, for a random number of its first moves, the
 * moves of the line whose dead end left the fewest cards so far (then the random order).
 * Orders change which win is found first, never the moves of a position, so a run that
 * ends without a win proves the position lost. No I/O; runs without the GIL, taking it back
 * every SIGNAL_EVERY positions to run signal handlers (Ctrl-C, a CPU cap's timer). The beam
 * search (its own section below) shares the position, the safe play and the key.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define T 8
#define SEQMAX 32 /* cards a pile holds now and will get: masks are 32 bits */
#define DEAL 8
#define MAXDEPTH 512

#define V_WON 0
#define V_LOST 1
#define V_UNKNOWN 2
#define V_NOMEM 3
#define V_SIGNAL 4 /* a signal handler raised (a CPU cap's, or Ctrl-C): its exception is set */

/* every this many positions, a search takes the GIL back to run signal handlers */
#define SIGNAL_EVERY 16384

/* 1 when a signal handler raised (its exception set); the GIL is held only for the check */
static int signalled(PyThreadState **ts, int *tick) {
    if (++*tick < SIGNAL_EVERY) return 0;
    *tick = 0;
    PyEval_RestoreThread(*ts);
    int r = PyErr_CheckSignals();
    *ts = PyEval_SaveThread();
    return r < 0;
}

typedef struct {
    uint32_t m[T];
    uint32_t d; /* deals made; 0xFFFFFFFF marks an empty slot */
} lkey;

typedef struct {
    lkey *keys;
    size_t cap, n;
} table;

static uint64_t khash(const lkey *k) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ k->d;
    for (int i = 0; i < T; i++) {
        h ^= k->m[i];
        h *= 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 29;
    }
    h *= 0x94D049BB133111EBULL;
    return h ^ (h >> 31);
}

static int tinit(table *t, size_t cap) {
    t->keys = malloc(cap * sizeof(lkey));
    if (!t->keys) return -1;
    memset(t->keys, 0xFF, cap * sizeof(lkey));
    t->cap = cap;
    t->n = 0;
    return 0;
}

static lkey *tslot(table *t, const lkey *k) {
    size_t mask = t->cap - 1, i = (size_t)khash(k) & mask;
    while (1) {
        lkey *s = &t->keys[i];
        if (s->d == 0xFFFFFFFFu || memcmp(s, k, sizeof(lkey)) == 0) return s;
        i = (i + 1) & mask;
    }
}

static int tgrow(table *t) {
    table u;
    if (tinit(&u, t->cap * 2)) return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->keys[i].d != 0xFFFFFFFFu) {
            *tslot(&u, &t->keys[i]) = t->keys[i];
            u.n++;
        }
    free(t->keys);
    *t = u;
    return 0;
}

/* 1: added; 0: present; -1: no memory */
static int tadd(table *t, const lkey *k) {
    if ((t->n + 1) * 4 > t->cap * 3 && tgrow(t)) return -1;
    lkey *s = tslot(t, k);
    if (s->d != 0xFFFFFFFFu) return 0;
    *s = *k;
    t->n++;
    return 1;
}

/* removal with backward-shift deletion (linear probing) */
static void tdel(table *t, const lkey *k) {
    size_t mask = t->cap - 1, i = (size_t)khash(k) & mask;
    while (1) {
        lkey *s = &t->keys[i];
        if (s->d == 0xFFFFFFFFu) return;
        if (memcmp(s, k, sizeof(lkey)) == 0) break;
        i = (i + 1) & mask;
    }
    size_t j = i;
    while (1) {
        j = (j + 1) & mask;
        lkey *s = &t->keys[j];
        if (s->d == 0xFFFFFFFFu) break;
        size_t h = (size_t)khash(s) & mask;
        /* move s to i if its home is not cyclically in (i, j] */
        if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
            t->keys[i] = *s;
            i = j;
        }
    }
    memset(&t->keys[i], 0xFF, sizeof(lkey));
    t->n--;
}

typedef struct {
    /* fixed */
    int len[T];                 /* sequence length per pile */
    unsigned char seq[T][SEQMAX];
    int ndeals;                 /* deals in the stock at the start */
    int dealk[64];              /* cards in deal i */
    int dealstart[64];          /* index in the stock of deal i's first card */
    unsigned char stock[256];
    int nstock;
    /* variable */
    int deals;                  /* deals made */
    int arrived[T];             /* sequence cards that have reached the pile */
    unsigned char pile[T][SEQMAX]; /* indexes into seq, bottom to top */
    int ht[T];
    uint32_t mask[T];
    int tops[15], remaining[15], instock[15];
    int left;
    uint32_t rng;
    int depth;     /* of the position whose moves are listed */
    int guide_len; /* this run tries best[d] first at each depth d below guide_len */
    int best[MAXDEPTH]; /* the moves to the dead end with the fewest cards left so far */
    int best_len;
} lstate;

static void getkey(const lstate *s, lkey *k) {
    for (int i = 0; i < T; i++) k->m[i] = s->mask[i];
    k->d = (uint32_t)s->deals;
}

/* The last-card test (2026-12-05, issue 24). The k-th rank-r card played follows the k-th
   rank r-1 one, so the last rank-r card played follows every card of a lower rank (and every
   other rank-r card), and a card below it in its pile is played after it. So a line that wins
   has, for each rank r with cards left, a rank-r card with nothing of rank r or lower below
   it, or one still in the stock (where it will be dealt is not followed here). The fixpoint of
   `dead` below looks at each card alone (some rank r-1 foundation will show up) and misses
   this: three 5s left, each above a 4, is dead for any number of 4s elsewhere. `need[r]`:
   rank r has cards left, none in the stock; `found[r]`: one of them has nothing of rank r or
   lower below it. `m`: the cards present, a bit per place in each pile's sequence (lower bits
   lower in the pile); `instock`, `remaining`: per rank, in the stock and in all. 1: no line
   wins. The depth-first search asks it of its own position, the beam of its masks.
   Counted from the end, the j-th last rank-r card has at most j-1 cards of any rank s <= r
   after it, so Hall's condition over the places of a rank's last cards is a stronger test
   (it won 126 of seeds 1-200 at 1,000,000 positions against this one's 124) but costs a
   third of the search's speed: not kept (docs/SOLVABILITY.md, Leap Year, sixth pass). */
static int dead_by_last_card(const lstate *s, const uint32_t *m, const int *instock,
                             const int *remaining) {
    int need[15] = {0}, found[15] = {0}, wanted = 0;
    for (int r = 2; r < 14; r++) wanted |= need[r] = !instock[r] && remaining[r] > 0;
    if (!wanted) return 0;
    for (int x = 0; x < T; x++) {
        int lowest_below = 99;
        for (uint32_t w = m[x]; w; w &= w - 1) { /* bottom up: lower bits first */
            int r = s->seq[x][__builtin_ctz(w)];
            if (lowest_below > r) found[r] = 1;
            if (r < lowest_below) lowest_below = r;
        }
    }
    for (int r = 2; r < 14; r++)
        if (need[r] && !found[r]) return 1;
    return 0;
}

static int dead(const lstate *s) {
    if (dead_by_last_card(s, s->mask, s->instock, s->remaining)) return 1;
    int shows[15];
    int depth[T];
    for (int r = 0; r < 15; r++) shows[r] = s->tops[r] > 0;
    for (int x = 0; x < T; x++) depth[x] = s->ht[x];
    int grew = 1;
    while (grew) {
        grew = 0;
        for (int r = 2; r < 14; r++)
            if (s->instock[r] && shows[r - 1] && !shows[r]) shows[r] = grew = 1;
        for (int x = 0; x < T; x++) {
            int h = depth[x];
            while (h && shows[s->seq[x][s->pile[x][h - 1]] - 1]) {
                h--;
                shows[s->seq[x][s->pile[x][h]]] = 1;
            }
            if (h != depth[x]) {
                depth[x] = h;
                grew = 1;
            }
        }
    }
    for (int x = 0; x < T; x++)
        if (depth[x]) return 1;
    return 0;
}

static inline int toprank(const lstate *s, int x) { return s->seq[x][s->pile[x][s->ht[x] - 1]]; }

/* the moves of the position, in the run's order; returns how many */
static int moves(lstate *s, int *out) {
    int stock_left = s->deals < s->ndeals;
    int gap = 0;
    for (int r = 2; r < 14; r++)
        if (!s->instock[r]) gap = 1;
    if ((!stock_left || gap) && dead(s)) return 0;
    int n = 0;
    for (int x = 0; x < T; x++)
        if (s->ht[x] && s->tops[toprank(s, x) - 1]) out[n++] = x;
    for (int i = 0; i < n; i++) {
        int r = toprank(s, out[i]);
        if (s->tops[r - 1] >= s->remaining[r]) {
            out[0] = out[i];
            return 1;
        }
    }
    if (n > 1) {
        if (s->rng) {
            uint32_t z = s->rng;
            for (int i = n - 1; i > 0; i--) {
                z ^= z << 13;
                z ^= z >> 17;
                z ^= z << 5;
                int j = (int)(z % (uint32_t)(i + 1));
                int t = out[i];
                out[i] = out[j];
                out[j] = t;
            }
            s->rng = z;
        } else {
            /* tallest pile first (stable) */
            for (int i = 1; i < n; i++) {
                int v = out[i], j = i;
                while (j > 0 && s->ht[out[j - 1]] < s->ht[v]) {
                    out[j] = out[j - 1];
                    j--;
                }
                out[j] = v;
            }
        }
    }
    if (stock_left) out[n++] = DEAL;
    if (s->depth < s->guide_len) {
        int g = s->best[s->depth];
        for (int i = 1; i < n; i++)
            if (out[i] == g) {
                out[i] = out[0];
                out[0] = g;
                break;
            }
    }
    return n;
}

static void apply(lstate *s, int m) {
    if (m == DEAL) {
        int d = s->deals++;
        for (int i = 0; i < s->dealk[d]; i++) {
            int j = s->arrived[i]++;
            s->pile[i][s->ht[i]++] = (unsigned char)j;
            s->mask[i] |= 1u << j;
            s->instock[s->seq[i][j]]--;
        }
        return;
    }
    int j = s->pile[m][--s->ht[m]];
    int r = s->seq[m][j];
    s->mask[m] &= ~(1u << j);
    s->tops[r - 1]--;
    s->tops[r]++;
    s->left--;
    s->remaining[r]--;
}

static void undo(lstate *s, int m) { /* a deal only (plays: unplay) */
    if (m != DEAL) return;
    int d = --s->deals;
    for (int i = s->dealk[d] - 1; i >= 0; i--) {
        int j = --s->arrived[i];
        s->ht[i]--;
        s->mask[i] &= ~(1u << j);
        s->instock[s->seq[i][j]]++;
    }
}

typedef struct {
    int moves[T + 1];
    int n, i;
    int played_idx; /* for undo of a play: seq index of the card */
} frame;

typedef struct {
    lstate s;
    table seen;
    long budget, nodes;
    int path[MAXDEPTH];
    int plen;
    int fewest; /* fewest cards left at a position with no moves (a dead end) */
    frame fr[MAXDEPTH];
    lkey stackkeys[MAXDEPTH];
    PyThreadState *ts; /* saved while the search runs without the GIL */
    int tick;
} search;

/* apply with the undo information kept in the frame */
static int play(lstate *s, int m) {
    if (m == DEAL) {
        apply(s, m);
        return -1;
    }
    int j = s->pile[m][s->ht[m] - 1];
    apply(s, m);
    return j;
}

static void unplay(lstate *s, int m, int j) {
    if (m == DEAL) {
        undo(s, m);
        return;
    }
    int r = s->seq[m][j];
    s->pile[m][s->ht[m]++] = (unsigned char)j;
    s->mask[m] |= 1u << j;
    s->tops[r]--;
    s->tops[r - 1]++;
    s->left++;
    s->remaining[r]++;
}

/* one run: V_WON (path filled), V_LOST, V_UNKNOWN (budget spent), V_NOMEM */
static int run(search *S, long budget, long *spent) {
    lstate *s = &S->s;
    lkey k;
    int depth = 0;
    long nodes = 0;
    int jplayed[MAXDEPTH];
    if (s->left == 0) {
        S->plen = 0;
        *spent = 0;
        return V_WON;
    }
    getkey(s, &k);
    int a = tadd(&S->seen, &k);
    if (a < 0) return V_NOMEM;
    if (a == 0) {
        *spent = 0;
        return V_LOST;
    }
    if (budget < 1) {
        tdel(&S->seen, &k);
        *spent = 0;
        return V_UNKNOWN;
    }
    S->stackkeys[0] = k;
    s->depth = 0;
    S->fr[0].n = moves(s, S->fr[0].moves);
    S->fr[0].i = 0;
    if (!S->fr[0].n && s->left < S->fewest) S->fewest = s->left;
    nodes = 1;
    while (depth >= 0) {
        frame *f = &S->fr[depth];
        if (f->i >= f->n) {
            /* finished: lost (stays in the table) */
            depth--;
            if (depth >= 0) {
                frame *g = &S->fr[depth];
                unplay(s, g->moves[g->i - 1], jplayed[depth]);
            }
            continue;
        }
        int m = f->moves[f->i++];
        jplayed[depth] = play(s, m);
        if (s->left == 0) {
            for (int d = 0; d <= depth; d++) S->path[d] = S->fr[d].moves[S->fr[d].i - 1];
            S->plen = depth + 1;
            /* take out the unfinished positions on the stack (not lost) */
            for (int d = 0; d <= depth; d++) tdel(&S->seen, &S->stackkeys[d]);
            *spent = nodes;
            return V_WON;
        }
        getkey(s, &k);
        a = tadd(&S->seen, &k);
        if (a < 0) return V_NOMEM;
        if (a == 0 || nodes >= budget) {
            unplay(s, m, jplayed[depth]);
            if (a == 0) continue;
            /* budget spent: unwind, taking out the unfinished positions */
            for (int d = depth; d >= 0; d--) {
                tdel(&S->seen, &S->stackkeys[d]);
                if (d > 0) {
                    frame *g = &S->fr[d - 1];
                    unplay(s, g->moves[g->i - 1], jplayed[d - 1]);
                }
            }
            tdel(&S->seen, &k); /* the position just added: not expanded */
            *spent = nodes;
            return V_UNKNOWN;
        }
        if (depth + 1 >= MAXDEPTH) return V_NOMEM;
        depth++;
        S->stackkeys[depth] = k;
        s->depth = depth;
        S->fr[depth].n = moves(s, S->fr[depth].moves);
        S->fr[depth].i = 0;
        if (!S->fr[depth].n && s->left < S->fewest) {
            S->fewest = s->left;
            for (int d = 0; d < depth; d++) s->best[d] = S->fr[d].moves[S->fr[d].i - 1];
            s->best_len = depth;
        }
        nodes++;
        if (signalled(&S->ts, &S->tick)) return V_SIGNAL;
    }
    *spent = nodes;
    return V_LOST;
}

/* the restarts: runs of `first` positions, each `grow` per mille (and one) larger than the
   one before, the last given what is left of the budget */
static int solve_all(search *S, long budget, long first, long grow, long *spent_out) {
    long spent = 0, size = first;
    int r = 0, v;
    while (1) {
        S->s.rng = r == 0 ? 0 : (uint32_t)(((uint64_t)r * 2654435761u) & 0xFFFFFFFFu);
        if (r && !S->s.rng) S->s.rng = 1;
        /* odd runs follow the closest line so far for a random number of its first moves */
        S->s.guide_len = 0;
        if (r % 2 == 1 && S->s.best_len) {
            uint32_t z = S->s.rng;
            z ^= z << 13;
            z ^= z >> 17;
            z ^= z << 5;
            S->s.rng = z;
            S->s.guide_len = (int)(z % (uint32_t)S->s.best_len);
        }
        long sp = 0;
        long b = budget - spent < size ? budget - spent : size;
        v = run(S, b, &sp);
        spent += sp;
        if (v != V_UNKNOWN || spent >= budget) break; /* V_SIGNAL, V_NOMEM too */
        r++;
        size += size * grow / 1000 + 1;
    }
    *spent_out = spent;
    return v;
}

static int load_list(PyObject *o, unsigned char *out, int max, int *n) {
    PyObject *seq = PySequence_Fast(o, "a list of ranks");
    if (!seq) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > max) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many cards");
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v < 1 || v > 13) {
            Py_DECREF(seq);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a rank is 1-13");
            return -1;
        }
        out[i] = (unsigned char)v;
    }
    *n = (int)len;
    Py_DECREF(seq);
    return 0;
}

/* fills s (fixed and variable parts) from Python lists; 0, or -1 with an exception set */
static int load_state(lstate *s, PyObject *tab, PyObject *stock, PyObject *tops) {
    if (PySequence_Size(tab) != T) {
        PyErr_SetString(PyExc_ValueError, "eight piles");
        return -1;
    }
    for (int x = 0; x < T; x++) {
        PyObject *p = PySequence_GetItem(tab, x);
        int n = 0;
        int bad = !p || load_list(p, s->seq[x], SEQMAX, &n);
        Py_XDECREF(p);
        if (bad) return -1;
        s->len[x] = s->arrived[x] = s->ht[x] = n;
        for (int j = 0; j < n; j++) {
            s->pile[x][j] = (unsigned char)j;
            s->mask[x] |= 1u << j;
        }
    }
    if (load_list(stock, s->stock, 256, &s->nstock)) return -1;
    s->ndeals = (s->nstock + T - 1) / T;
    for (int d = 0; d < s->ndeals; d++) {
        s->dealstart[d] = d * T;
        s->dealk[d] = s->nstock - d * T < T ? s->nstock - d * T : T;
        for (int i = 0; i < s->dealk[d]; i++) {
            int r = s->stock[d * T + i];
            if (s->len[i] >= SEQMAX) {
                PyErr_SetString(PyExc_ValueError, "a pile would hold too many cards");
                return -1;
            }
            s->seq[i][s->len[i]++] = (unsigned char)r;
            s->instock[r]++;
        }
    }
    if (PySequence_Size(tops) != 15) {
        PyErr_SetString(PyExc_ValueError, "15 counts");
        return -1;
    }
    for (int r = 0; r < 15; r++) {
        PyObject *v = PySequence_GetItem(tops, r);
        s->tops[r] = v ? (int)PyLong_AsLong(v) : 0;
        Py_XDECREF(v);
    }
    if (PyErr_Occurred()) return -1;
    for (int x = 0; x < T; x++)
        for (int j = 0; j < s->len[x]; j++) s->remaining[s->seq[x][j]]++;
    s->left = 0;
    for (int r = 0; r < 15; r++) s->left += s->remaining[r];
    return 0;
}

static PyObject *path_list(const int *path, int n) {
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int i = 0; i < n; i++)
        PyList_SET_ITEM(out, i, PyLong_FromLong(path[i] == DEAL ? -1 : path[i]));
    return out;
}

static PyObject *py_solve(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tab, *stock, *tops;
    long budget, first, grow;
    if (!PyArg_ParseTuple(args, "OOOlll", &tab, &stock, &tops, &budget, &first, &grow)) return NULL;
    search *S = calloc(1, sizeof(search));
    if (!S) return PyErr_NoMemory();
    lstate *s = &S->s;
    if (load_state(s, tab, stock, tops)) {
        free(S);
        return NULL;
    }
    if (tinit(&S->seen, 1 << 16)) {
        free(S);
        return PyErr_NoMemory();
    }
    long spent = 0;
    int v;
    S->fewest = s->left;
    S->ts = PyEval_SaveThread();
    v = solve_all(S, budget, first, grow, &spent);
    PyEval_RestoreThread(S->ts);
    free(S->seen.keys);
    if (v == V_SIGNAL) {
        free(S);
        return NULL;
    }
    if (v == V_NOMEM) {
        free(S);
        return PyErr_NoMemory();
    }
    PyObject *path = path_list(S->path, v == V_WON ? S->plen : 0);
    if (!path) {
        free(S);
        return NULL;
    }
    int fewest = v == V_WON ? 0 : S->fewest;
    free(S);
    const char *name = v == V_WON ? "won" : v == V_LOST ? "lost" : "unknown";
    return Py_BuildValue("(sNli)", name, path, spent, fewest);
}

/* ---- The beam search (2026-12-05, issue 24): wins, and losses only when it drops nothing ---
 *
 * The depth-first search above spends its runs on the end games of a few lines through the
 * 23 deals. The beam goes through the deals level by level instead: at level d (d deals made)
 * it keeps `width` positions; from each it lists every position its plays reach before the next
 * deal (at most `phase_cap` a position; the safe play is still the only move where it applies),
 * deals from each, and keeps the `width` lowest of the new level's positions by a score, in
 * thousandths of a card: 1000 a card left, plus per pair of cards in a pile whose upper card
 * (played first) is of a higher rank than the lower one, `inversions` (the lower one waits
 * until the foundations have grown past its own rank), plus `future` per such pair with the
 * upper card still to be dealt onto the pile, plus `held` per rank a card lies below the
 * highest card above it. At the last level every play is listed: an empty tableau is a win.
 * A beam that dropped a position (by its width, the phase cap or the budget) and found no
 * win proves nothing ("unknown"); one that dropped none followed every line: "lost". Different
 * weights win different deals (solve_leapyear.py runs several). */

typedef struct {
    uint32_t m[T];
    unsigned char tops[15];
    int parent;   /* index in the level before; -1 at level 0 */
    int off, n;   /* this phase's plays (pile numbers) in the plays arena of its level */
    long score;
} bnode;

typedef struct {
    bnode *v;
    size_t n, cap;
    unsigned char *plays;
    size_t pn, pcap;
} blevel;

static int blevel_push(blevel *L, const bnode *b, const unsigned char *plays, int np) {
    if (L->n == L->cap) {
        size_t c = L->cap ? L->cap * 2 : 1024;
        bnode *v = realloc(L->v, c * sizeof(bnode));
        if (!v) return -1;
        L->v = v;
        L->cap = c;
    }
    if (L->pn + (size_t)np > L->pcap) {
        size_t c = L->pcap ? L->pcap * 2 : 16384;
        while (c < L->pn + (size_t)np) c *= 2;
        unsigned char *p = realloc(L->plays, c);
        if (!p) return -1;
        L->plays = p;
        L->pcap = c;
    }
    bnode *x = &L->v[L->n++];
    *x = *b;
    x->off = (int)L->pn;
    x->n = np;
    if (np) memcpy(L->plays + L->pn, plays, (size_t)np);
    L->pn += (size_t)np;
    return 0;
}

/* the phase's positions: open addressing, emptied in O(1) by a new generation */
typedef struct {
    lkey *keys;
    uint32_t *gen;
    size_t mask;
    uint32_t now;
    long n;
} gset;

static int gset_init(gset *g, long cap) {
    size_t c = 64;
    while ((long)c < cap * 2 + 2) c *= 2;
    g->keys = malloc(c * sizeof(lkey));
    g->gen = calloc(c, sizeof(uint32_t));
    g->mask = c - 1;
    g->now = 1;
    g->n = 0;
    return g->keys && g->gen ? 0 : -1;
}

/* 1: added, 0: there already */
static int gset_add(gset *g, const lkey *k) {
    size_t i = (size_t)khash(k) & g->mask;
    while (g->gen[i] == g->now) {
        if (memcmp(&g->keys[i], k, sizeof(lkey)) == 0) return 0;
        i = (i + 1) & g->mask;
    }
    g->gen[i] = g->now;
    g->keys[i] = *k;
    g->n++;
    return 1;
}

static void gset_clear(gset *g) {
    g->now++;
    g->n = 0;
    if (g->now == 0) { /* wrapped: every slot could look current */
        memset(g->gen, 0, (g->mask + 1) * sizeof(uint32_t));
        g->now = 1;
    }
}

typedef struct {
    const lstate *s;      /* fixed part: seq, len, dealk, ndeals */
    int narr[T][65];      /* cards of pile x's sequence arrived after d deals */
    uint32_t higher[T][SEQMAX]; /* pile x, card j: the later cards of its sequence of higher rank */
    int instock_after[65][15]; /* rank counts still in the stock after d deals */
    long w_inv, w_fut, w_held; /* per mille of a card left */
    long cap;
    long nodes, budget;
    gset phase_seen;
    table level_seen;
    /* the phase search's stack */
    uint32_t m[T];
    int tops[15], rem[15];
    unsigned char plays[SEQMAX * T];
    int np;
    int won;
    int dropped; /* a position was left out: the level's width, the phase cap or the budget */
    int win_plays[SEQMAX * T];
    int win_np;
    PyThreadState **ts; /* saved while the beam runs without the GIL */
    int tick;
} beam;

/* the level's order: lower first (see the section's comment) */
static long bscore(const beam *B, const uint32_t *m, int d) {
    const lstate *s = B->s;
    long left = 0, inv = 0, fut = 0, held = 0;
    for (int x = 0; x < T; x++) {
        int n = B->narr[x][d];
        uint32_t future = n >= 32 ? 0 : ~((1u << n) - 1);
        int hi = 0;
        for (int j = n - 1; j >= 0; j--) {
            if (!(m[x] >> j & 1)) continue;
            left++;
            inv += __builtin_popcount(m[x] & B->higher[x][j]);
            fut += __builtin_popcount(B->higher[x][j] & future);
            int r = s->seq[x][j];
            if (hi > r) held += hi - r;
            if (r > hi) hi = r;
        }
    }
    return left * 1000 + B->w_inv * inv + B->w_fut * fut + B->w_held * held;
}

/* every position the plays of level d reach from B->m (depth first, each once): dealt from
   (into `next`) or, at the last level, checked for a win; -1: out of memory, -2: a signal */
static int bphase(beam *B, int d, int parent, blevel *next) {
    if (B->nodes >= B->budget) return 0;
    lkey k;
    for (int x = 0; x < T; x++) k.m[x] = B->m[x];
    k.d = (uint32_t)d;
    if (B->phase_seen.n >= B->cap) {
        B->dropped = 1;
        return 0;
    }
    if (!gset_add(&B->phase_seen, &k)) return 0;
    B->nodes++;
    if (signalled(B->ts, &B->tick)) return -2;
    /* lost, and so is every position after it: nothing dropped (a level's node was tested
       when it was put in the level) */
    if ((B->np || d == 0) && dead_by_last_card(B->s, B->m, B->instock_after[d], B->rem))
        return 0;
    const lstate *s = B->s;
    if (d == s->ndeals) {
        int empty = 1;
        for (int x = 0; x < T; x++)
            if (B->m[x]) empty = 0;
        if (empty) {
            B->won = 1;
            B->win_np = B->np;
            for (int i = 0; i < B->np; i++) B->win_plays[i] = B->plays[i];
            return 0;
        }
    } else {
        bnode b;
        for (int x = 0; x < T; x++) {
            b.m[x] = B->m[x];
            if (B->narr[x][d + 1] > B->narr[x][d]) b.m[x] |= 1u << (B->narr[x][d + 1] - 1);
            k.m[x] = b.m[x];
        }
        k.d = (uint32_t)(d + 1);
        /* a dead position takes no place in the next level (the cards left, `B->rem`, are
           the same on both sides of a deal) */
        int lost = dead_by_last_card(s, b.m, B->instock_after[d + 1], B->rem);
        int a = lost ? 0 : tadd(&B->level_seen, &k);
        if (a < 0) return -1;
        if (a) {
            for (int r = 0; r < 15; r++) b.tops[r] = (unsigned char)B->tops[r];
            b.parent = parent;
            b.score = bscore(B, b.m, d + 1);
            if (blevel_push(next, &b, B->plays, B->np)) return -1;
        }
    }
    int cand[T], nc = 0, forced = -1;
    for (int x = 0; x < T && forced < 0; x++) {
        if (!B->m[x]) continue;
        int j = 31 - __builtin_clz(B->m[x]);
        int r = s->seq[x][j];
        if (!B->tops[r - 1]) continue;
        if (B->tops[r - 1] >= B->rem[r]) forced = x;
        cand[nc++] = x;
    }
    if (forced >= 0) {
        cand[0] = forced;
        nc = 1;
    }
    for (int i = 0; i < nc && !B->won; i++) {
        int x = cand[i];
        int j = 31 - __builtin_clz(B->m[x]);
        int r = s->seq[x][j];
        B->m[x] &= ~(1u << j);
        B->tops[r - 1]--;
        B->tops[r]++;
        B->rem[r]--;
        B->plays[B->np++] = (unsigned char)x;
        int e = bphase(B, d, parent, next);
        B->np--;
        B->rem[r]++;
        B->tops[r]--;
        B->tops[r - 1]++;
        B->m[x] |= 1u << j;
        if (e) return e;
    }
    return 0;
}

static int bnode_cmp(const void *a, const void *b) {
    const bnode *x = a, *y = b;
    return x->score < y->score ? -1 : x->score > y->score;
}

static void tclear(table *t) {
    memset(t->keys, 0xFF, t->cap * sizeof(lkey));
    t->n = 0;
}

/* V_WON (path, plen filled), V_LOST, V_UNKNOWN, V_NOMEM or V_SIGNAL */
static int beam_search(const lstate *s, long width, const long *w, long cap, long budget,
                       int *path, int *plen, long *spent, PyThreadState **ts) {
    beam *B = calloc(1, sizeof(beam));
    blevel *levels = calloc((size_t)s->ndeals + 2, sizeof(blevel));
    int v = V_NOMEM;
    if (!B || !levels || gset_init(&B->phase_seen, cap) || tinit(&B->level_seen, 1 << 14)) goto out;
    B->s = s;
    B->ts = ts;
    B->w_inv = w[0];
    B->w_fut = w[1];
    B->w_held = w[2];
    B->cap = cap;
    B->budget = budget;
    for (int x = 0; x < T; x++) {
        B->narr[x][0] = s->arrived[x];
        for (int d = 1; d <= s->ndeals; d++) B->narr[x][d] = B->narr[x][d - 1] + (s->dealk[d - 1] > x);
        for (int j = 0; j < s->len[x]; j++) {
            uint32_t h = 0;
            for (int k = j + 1; k < s->len[x]; k++)
                if (s->seq[x][k] > s->seq[x][j]) h |= 1u << k;
            B->higher[x][j] = h;
        }
    }
    for (int r = 0; r < 15; r++) B->instock_after[0][r] = s->instock[r];
    for (int d = 0; d < s->ndeals; d++) {
        for (int r = 0; r < 15; r++) B->instock_after[d + 1][r] = B->instock_after[d][r];
        for (int i = 0; i < s->dealk[d]; i++) B->instock_after[d + 1][s->stock[d * T + i]]--;
    }
    bnode root;
    for (int x = 0; x < T; x++) root.m[x] = s->mask[x];
    for (int r = 0; r < 15; r++) root.tops[r] = (unsigned char)s->tops[r];
    root.parent = -1;
    root.score = 0;
    if (blevel_push(&levels[0], &root, NULL, 0)) goto out;
    int d = 0, from = 0;
    for (; d <= s->ndeals; d++) {
        blevel *L = &levels[d];
        if (d > 0) {
            qsort(L->v, L->n, sizeof(bnode), bnode_cmp);
            if ((long)L->n > width) {
                L->n = (size_t)width;
                B->dropped = 1;
            }
        }
        tclear(&B->level_seen);
        for (size_t i = 0; i < L->n && !B->won && B->nodes < B->budget; i++) {
            bnode *b = &L->v[i];
            for (int x = 0; x < T; x++) B->m[x] = b->m[x];
            for (int r = 0; r < 15; r++) B->tops[r] = b->tops[r];
            for (int r = 0; r < 15; r++) B->rem[r] = B->instock_after[d][r];
            for (int x = 0; x < T; x++)
                for (uint32_t w = b->m[x]; w; w &= w - 1) B->rem[s->seq[x][__builtin_ctz(w)]]++;
            B->np = 0;
            gset_clear(&B->phase_seen);
            from = (int)i;
            int e = bphase(B, d, (int)i, &levels[d + 1]);
            if (e) {
                v = e == -2 ? V_SIGNAL : V_NOMEM;
                goto out;
            }
        }
        if (B->nodes >= B->budget && !B->won) B->dropped = 1;
        if (B->won || B->nodes >= B->budget || levels[d + 1].n == 0) break;
    }
    if (!B->won) {
        /* nothing left out: every line was followed, so none wins */
        v = B->dropped ? V_UNKNOWN : V_LOST;
        goto out;
    }
    /* the winning line: level 1's node's plays (from the root), a deal, level 2's, ... up to
       the node the winning phase started from, then that phase's plays */
    {
        int chain[70];
        int at = from;
        for (int lv = d; lv >= 1; lv--) {
            chain[lv] = at;
            at = levels[lv].v[at].parent;
        }
        int n = 0;
        for (int lv = 1; lv <= d; lv++) {
            const bnode *b = &levels[lv].v[chain[lv]];
            for (int i = 0; i < b->n; i++) path[n++] = levels[lv].plays[b->off + i];
            path[n++] = DEAL;
        }
        for (int i = 0; i < B->win_np; i++) path[n++] = B->win_plays[i];
        *plen = n;
        v = V_WON;
    }
out:
    *spent = B ? B->nodes : 0;
    if (B) {
        free(B->phase_seen.keys);
        free(B->phase_seen.gen);
        free(B->level_seen.keys);
    }
    if (levels) {
        for (int i = 0; i <= (s->ndeals + 1); i++) {
            free(levels[i].v);
            free(levels[i].plays);
        }
    }
    free(levels);
    free(B);
    return v;
}

static PyObject *py_beam(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tab, *stock, *tops;
    long width, w[3], cap, budget;
    if (!PyArg_ParseTuple(args, "OOOllllll", &tab, &stock, &tops, &width, &w[0], &w[1], &w[2], &cap,
                          &budget))
        return NULL;
    if (width < 1 || cap < 1) {
        PyErr_SetString(PyExc_ValueError, "width and phase_cap are at least 1");
        return NULL;
    }
    lstate *s = calloc(1, sizeof(lstate));
    if (!s) return PyErr_NoMemory();
    if (load_state(s, tab, stock, tops)) {
        free(s);
        return NULL;
    }
    int path[MAXDEPTH], plen = 0, v;
    long spent = 0;
    PyThreadState *ts = PyEval_SaveThread();
    v = beam_search(s, width, w, cap, budget, path, &plen, &spent, &ts);
    PyEval_RestoreThread(ts);
    free(s);
    if (v == V_SIGNAL) return NULL;
    if (v == V_NOMEM) return PyErr_NoMemory();
    PyObject *out = path_list(path, v == V_WON ? plen : 0);
    if (!out) return NULL;
    const char *name = v == V_WON ? "won" : v == V_LOST ? "lost" : "unknown";
    return Py_BuildValue("(sNl)", name, out, spent);
}

static PyMethodDef methods[] = {
    {"solve", py_solve, METH_VARARGS,
     "solve(tab, stock, tops, budget, first_run, grow_permille) -> (verdict, path, positions, "
     "fewest cards left at a dead end)"},
    {"beam", py_beam, METH_VARARGS,
     "beam(tab, stock, tops, width, inversions, future, held, phase_cap, budget) -> (verdict, "
     "path, positions): a beam search through the deals (lost only if it dropped no position)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_solve_leapyear_c",
                                    "Leap Year's search in C (solve_leapyear.py).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__solve_leapyear_c(void) { return PyModule_Create(&module); }
