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
 * ends without a win proves the position lost. No I/O; runs without the GIL.
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

static int dead(const lstate *s) {
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
        if (v != V_UNKNOWN || spent >= budget) break;
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

static PyObject *py_solve(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tab, *stock, *tops;
    long budget, first, grow;
    if (!PyArg_ParseTuple(args, "OOOlll", &tab, &stock, &tops, &budget, &first, &grow)) return NULL;
    search *S = calloc(1, sizeof(search));
    if (!S) return PyErr_NoMemory();
    lstate *s = &S->s;
    if (PySequence_Size(tab) != T) {
        free(S);
        PyErr_SetString(PyExc_ValueError, "eight piles");
        return NULL;
    }
    for (int x = 0; x < T; x++) {
        PyObject *p = PySequence_GetItem(tab, x);
        int n = 0;
        int bad = !p || load_list(p, s->seq[x], SEQMAX, &n);
        Py_XDECREF(p);
        if (bad) {
            free(S);
            return NULL;
        }
        s->len[x] = s->arrived[x] = s->ht[x] = n;
        for (int j = 0; j < n; j++) {
            s->pile[x][j] = (unsigned char)j;
            s->mask[x] |= 1u << j;
        }
    }
    if (load_list(stock, s->stock, 256, &s->nstock)) {
        free(S);
        return NULL;
    }
    s->ndeals = (s->nstock + T - 1) / T;
    for (int d = 0; d < s->ndeals; d++) {
        s->dealstart[d] = d * T;
        s->dealk[d] = s->nstock - d * T < T ? s->nstock - d * T : T;
        for (int i = 0; i < s->dealk[d]; i++) {
            int r = s->stock[d * T + i];
            if (s->len[i] >= SEQMAX) {
                free(S);
                PyErr_SetString(PyExc_ValueError, "a pile would hold too many cards");
                return NULL;
            }
            s->seq[i][s->len[i]++] = (unsigned char)r;
            s->instock[r]++;
        }
    }
    if (PySequence_Size(tops) != 15) {
        free(S);
        PyErr_SetString(PyExc_ValueError, "15 counts");
        return NULL;
    }
    for (int r = 0; r < 15; r++) {
        PyObject *v = PySequence_GetItem(tops, r);
        s->tops[r] = v ? (int)PyLong_AsLong(v) : 0;
        Py_XDECREF(v);
    }
    if (PyErr_Occurred()) {
        free(S);
        return NULL;
    }
    for (int x = 0; x < T; x++)
        for (int j = 0; j < s->len[x]; j++) s->remaining[s->seq[x][j]]++;
    s->left = 0;
    for (int r = 0; r < 15; r++) s->left += s->remaining[r];
    if (tinit(&S->seen, 1 << 16)) {
        free(S);
        return PyErr_NoMemory();
    }
    long spent = 0;
    int v;
    S->fewest = s->left;
    Py_BEGIN_ALLOW_THREADS
    v = solve_all(S, budget, first, grow, &spent);
    Py_END_ALLOW_THREADS
    free(S->seen.keys);
    if (v == V_NOMEM) {
        free(S);
        return PyErr_NoMemory();
    }
    PyObject *path = PyList_New(v == V_WON ? S->plen : 0);
    if (!path) {
        free(S);
        return NULL;
    }
    if (v == V_WON)
        for (int i = 0; i < S->plen; i++)
            PyList_SET_ITEM(path, i, PyLong_FromLong(S->path[i] == DEAL ? -1 : S->path[i]));
    int fewest = v == V_WON ? 0 : S->fewest;
    free(S);
    const char *name = v == V_WON ? "won" : v == V_LOST ? "lost" : "unknown";
    return Py_BuildValue("(sNli)", name, path, spent, fewest);
}

static PyMethodDef methods[] = {
    {"solve", py_solve, METH_VARARGS,
     "solve(tab, stock, tops, budget, first_run, grow_permille) -> (verdict, path, positions, "
     "fewest cards left at a dead end)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_solve_leapyear_c",
                                    "Leap Year's search in C (solve_leapyear.py).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__solve_leapyear_c(void) { return PyModule_Create(&module); }
