/*
 * jericho_game._kernel: the compiled rules kernel (docs/engine.md, "The C kernel").
 *
 * The same integer model as the pure-Python reference, src/jericho_game/core.py, and the
 * same Zobrist keys (passed in from core.Tables), so that tests can compare both kernels
 * ply by ply.  Python objects only appear at the boundary: the State type (push/pop, move
 * generation, queries), random/guided playouts, one whole MCTS search per call, and the
 * BatchEngine type (n games for the batched environment, arrays by the buffer protocol).
 *
 * Model (see core.py for the meaning of each field):
 *   piece 0..24 = (size-1)*5 + colour; cell 0..n-1 (South's camp first);
 *   move code = piece * n + cell, pass = 25 * n.
 * Limits checked when a Board is built: <= 32 cells (cell sets are uint32 masks),
 * <= 16 alignments, <= 8 cells of one camp per alignment, <= 4 alignments per cell.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define N_PIECES 25
#define MAXC 32
#define MAXA 16
#define MAXW 8
#define MAXT 4
#define MAXCODES (N_PIECES * MAXC + 1)
#define FULL_HEIGHT 4
#define SEVEN 7
#define TWO_OR_MORE (1 << 12)
#define NO_OUTCOME (-1)
#define DRAW 2

/* ------------------------------------------------------------------------------------ */
/* Board: everything precomputed from a topology (a C copy of core.Tables).              */

typedef struct {
    int n_cells, camp_size, n_align, pass_code;
    int n_south[MAXA], n_north[MAXA];
    int south[MAXA][MAXW], north[MAXA][MAXW];
    int n_through[MAXC], through[MAXC][MAXT];
    /* When every alignment has at most two cells per camp (the standard board): the cells as
       exactly two slots, padded with cell n_cells whose key is always 0, for a branch-light
       settlement in the hot loops. */
    int w2;
    int south2[MAXA][2], north2[MAXA][2];
    uint32_t aligned[MAXC]; /* cells sharing an alignment with a cell, itself excluded */
    uint64_t z_tower[MAXC][FULL_HEIGHT * N_PIECES];
    uint64_t z_reserve[2][N_PIECES];
    uint64_t z_turn;
    uint64_t z_last[MAXCODES];
    uint64_t z_pass[3];
} Board;

typedef struct {
    PyObject_HEAD
    Board b;
    PyObject *moves; /* tuple of interned Move objects, indexed by move code */
} BoardObject;

/* One position.  Plain data: copying it is the undo record (copy-make). */
typedef struct {
    uint32_t code[MAXC];     /* tower: 5 bits per level, bottom first, each piece + 1 */
    uint8_t height[MAXC];
    uint16_t key[MAXC + 1];  /* strength keys; the extra slot stays 0 */
    uint32_t size_free[5], colour_free[5];
    uint32_t reserve[2];
    int8_t leader[MAXA];
    int8_t score[2];
    int8_t turn, passes, outcome, last_cell, last_piece;
    uint32_t last_below;
    uint64_t zhash;
} Pos;

static inline int piece_size(int p) { return p / 5; }
static inline int piece_colour(int p) { return p % 5; }

/* The one settlement function (RULES.md section 5): who leads alignment a under `key`. */
static inline int leader_of(const Board *B, const uint16_t *key, int a)
{
    int s = 0, n = 0;
    if (B->w2) {
        int s1 = key[B->south2[a][1]], n1 = key[B->north2[a][1]];
        s = key[B->south2[a][0]];
        n = key[B->north2[a][0]];
        if (s1 > s) s = s1;
        if (n1 > n) n = n1;
        return s > n && n ? 0 : n > s && s ? 1 : -1;
    }
    for (int i = 0; i < B->n_south[a]; i++) {
        int v = key[B->south[a][i]];
        if (v > s) s = v;
    }
    for (int i = 0; i < B->n_north[a]; i++) {
        int v = key[B->north[a][i]];
        if (v > n) n = v;
    }
    if (s > n && n) return 0;
    if (n > s && s) return 1;
    return -1;
}

static void pos_init(const Board *B, Pos *P)
{
    memset(P, 0, sizeof(*P));
    uint32_t all = B->n_cells == 32 ? 0xFFFFFFFFu : ((1u << B->n_cells) - 1);
    for (int i = 0; i < 5; i++) P->size_free[i] = P->colour_free[i] = all;
    P->reserve[0] = P->reserve[1] = (1u << N_PIECES) - 1;
    for (int a = 0; a < MAXA; a++) P->leader[a] = -1;
    P->last_cell = -1;
    P->last_piece = -1;
    P->outcome = NO_OUTCOME;
    uint64_t z = 0;
    for (int s = 0; s < 2; s++)
        for (int p = 0; p < N_PIECES; p++) z ^= B->z_reserve[s][p];
    P->zhash = z;
}

static inline uint32_t fits(const Pos *P, int p)
{
    return P->size_free[piece_size(p)] & P->colour_free[piece_colour(p)];
}

/* Cells where the opponent's last piece may not go (asymmetry rule). */
static inline uint32_t forbidden_copy(const Board *B, const Pos *P)
{
    if (P->last_cell < 0) return 0;
    uint32_t m = B->aligned[(int)P->last_cell], out = 0;
    while (m) {
        int c = __builtin_ctz(m);
        m &= m - 1;
        if (P->code[c] == P->last_below) out |= 1u << c;
    }
    return out;
}

static inline uint32_t piece_cells(const Board *B, const Pos *P, int p)
{
    uint32_t cells = fits(P, p);
    if (p == P->last_piece && P->last_cell >= 0) cells &= ~forbidden_copy(B, P);
    return cells;
}

/* The pieces of the side to move that have a legal placement, each with the mask of its legal
   cells, in piece order (code order); returns how many: 0 when passing is forced or the game is
   over.  The one walk behind LegalMoves, State.legal_groups and gen_placements. */
static int placement_groups(const Board *B, const Pos *P, int *piece, uint32_t *cells)
{
    int n = 0;
    if (P->outcome != NO_OUTCOME) return 0;
    uint32_t r = P->reserve[(int)P->turn];
    while (r) {
        int p = __builtin_ctz(r);
        r &= r - 1;
        uint32_t c = piece_cells(B, P, p);
        if (c) {
            piece[n] = p;
            cells[n++] = c;
        }
    }
    return n;
}

/* Legal placements in code order (piece, then cell); no pass.  Returns the count. */
static int gen_placements(const Board *B, const Pos *P, int *out)
{
    int piece[N_PIECES];
    uint32_t cells[N_PIECES];
    int groups = placement_groups(B, P, piece, cells), n = 0;
    for (int i = 0; i < groups; i++) {
        uint32_t m = cells[i];
        while (m) {
            int c = __builtin_ctz(m);
            m &= m - 1;
            out[n++] = piece[i] * B->n_cells + c;
        }
    }
    return n;
}

/* Legal moves: placements, or [pass] when none, or nothing once the game is over. */
static int gen_legal(const Board *B, const Pos *P, int *out)
{
    if (P->outcome != NO_OUTCOME) return 0;
    int n = gen_placements(B, P, out);
    if (!n) out[n++] = B->pass_code;
    return n;
}

static int has_placement(const Board *B, const Pos *P)
{
    uint32_t r = P->reserve[(int)P->turn];
    while (r) {
        int p = __builtin_ctz(r);
        r &= r - 1;
        if (piece_cells(B, P, p)) return 1;
    }
    return 0;
}

static int is_legal(const Board *B, const Pos *P, long code)
{
    if (P->outcome != NO_OUTCOME) return 0;
    if (code == B->pass_code) return !has_placement(B, P);
    if (code < 0 || code > B->pass_code) return 0;
    int p = (int)(code / B->n_cells), c = (int)(code % B->n_cells);
    if (!(P->reserve[(int)P->turn] >> p & 1)) return 0;
    return (piece_cells(B, P, p) >> c) & 1;
}

static inline uint16_t stacked_key(const Pos *P, int size, int c)
{
    uint16_t k = (uint16_t)(((size + 1) << 9) | ((P->key[c] & 0xFFF) >> 3));
    return P->height[c] ? (uint16_t)(k | TWO_OR_MORE) : k;
}

/* Stack piece p on cell c and re-settle the alignments through c. */
static inline void place(const Board *B, Pos *P, int p, int c)
{
    int h = P->height[c];
    uint32_t below = P->code[c];
    P->last_cell = (int8_t)c;
    P->last_piece = (int8_t)p;
    P->last_below = below;
    P->code[c] = below | ((uint32_t)(p + 1) << (5 * h));
    P->zhash ^= B->z_tower[c][h * N_PIECES + p];
    P->key[c] = stacked_key(P, piece_size(p), c);
    P->height[c] = (uint8_t)(h + 1);
    uint32_t nb = ~(1u << c);
    if (h + 1 == FULL_HEIGHT) {
        for (int i = 0; i < 5; i++) {
            P->size_free[i] &= nb;
            P->colour_free[i] &= nb;
        }
    } else {
        P->size_free[piece_size(p)] &= nb;
        P->colour_free[piece_colour(p)] &= nb;
    }
    for (int i = 0; i < B->n_through[c]; i++) {
        int a = B->through[c][i];
        int nl = leader_of(B, P->key, a), ol = P->leader[a];
        if (nl != ol) {
            if (ol >= 0) P->score[ol]--;
            if (nl >= 0) P->score[nl]++;
            P->leader[a] = (int8_t)nl;
        }
    }
}

/* Play a legal move code (no checks: callers check). */
static inline void apply(const Board *B, Pos *P, int code)
{
    int turn = P->turn, other = 1 - turn;
    int before = P->score[other];
    if (code == B->pass_code) {
        P->passes++;
        P->last_cell = -1;
    } else {
        int p = code / B->n_cells, c = code % B->n_cells;
        P->reserve[turn] ^= 1u << p;
        P->zhash ^= B->z_reserve[turn][p];
        place(B, P, p, c);
        P->passes = 0;
    }
    if (P->score[other] >= SEVEN && before >= SEVEN)
        P->outcome = (int8_t)other;
    else if (P->passes >= 2)
        P->outcome = P->score[0] > P->score[1] ? 0 : P->score[1] > P->score[0] ? 1 : DRAW;
    P->turn = (int8_t)other;
}

static uint64_t hash_key(const Board *B, const Pos *P)
{
    int last = P->last_cell >= 0 ? P->last_piece * B->n_cells + P->last_cell : B->pass_code;
    uint64_t z = P->zhash ^ B->z_last[last] ^ B->z_pass[P->passes > 2 ? 2 : P->passes];
    return P->turn ? z ^ B->z_turn : z;
}

/* Score changes ds[side] if a piece of `size` were stacked on cell c (nothing is played). */
static inline void effect(const Board *B, Pos *P, int size, int c, int ds[2])
{
    uint16_t old = P->key[c];
    P->key[c] = stacked_key(P, size, c);
    ds[0] = ds[1] = 0;
    for (int i = 0; i < B->n_through[c]; i++) {
        int a = B->through[c][i];
        int nl = leader_of(B, P->key, a), ol = P->leader[a];
        if (nl != ol) {
            if (ol >= 0) ds[ol]--;
            if (nl >= 0) ds[nl]++;
        }
    }
    P->key[c] = old;
}

/* Whether the side to move has a placement leaving `holder` below 7 monoliths. */
static int breaks_possible(const Board *B, Pos *P, int holder)
{
    if (P->score[holder] < SEVEN) return 1;
    uint32_t by_size[5] = {0, 0, 0, 0, 0};
    uint32_t r = P->reserve[(int)P->turn];
    while (r) {
        int p = __builtin_ctz(r);
        r &= r - 1;
        by_size[piece_size(p)] |= piece_cells(B, P, p);
    }
    uint32_t held = 0; /* cells on an alignment the holder leads: only those can lower it */
    for (int c = 0; c < B->n_cells; c++)
        for (int i = 0; i < B->n_through[c]; i++)
            if (P->leader[B->through[c][i]] == holder) held |= 1u << c;
    for (int s = 0; s < 5; s++) {
        uint32_t m = by_size[s] & held;
        while (m) {
            int c = __builtin_ctz(m), ds[2];
            m &= m - 1;
            effect(B, P, s, c, ds);
            if (P->score[holder] + ds[holder] < SEVEN) return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Random numbers: splitmix64 (small state, good enough for playouts, reproducible).    */

static inline uint64_t rnext(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint32_t below_n(uint32_t x, uint32_t n) { return (uint32_t)(((uint64_t)x * n) >> 32); }

/* ------------------------------------------------------------------------------------ */
/* Playouts: random (uniform over legal placements) and guided (best of k samples).      */

typedef struct {
    int8_t pieces[2][N_PIECES];
    int n[2];
} Hands;

static void hands_init(const Pos *P, Hands *H)
{
    for (int s = 0; s < 2; s++) {
        H->n[s] = 0;
        for (int p = 0; p < N_PIECES; p++)
            if (P->reserve[s] >> p & 1) H->pieces[s][H->n[s]++] = (int8_t)p;
    }
}

static inline int sample_legal(const Board *B, const Pos *P, const int8_t *mine, int np, uint64_t *rng, int *pi, int *pc)
{
    uint64_t x = rnext(rng);
    int i = (int)below_n((uint32_t)(x >> 32), (uint32_t)np);
    int p = mine[i];
    int c = (int)below_n((uint32_t)x, (uint32_t)B->n_cells);
    *pi = i;
    *pc = c;
    if (!((fits(P, p) >> c) & 1)) return -1;
    if (p == P->last_piece && P->last_cell >= 0 && P->code[c] == P->last_below &&
        (B->aligned[(int)P->last_cell] >> c & 1))
        return -1;
    return p;
}

/* Uniform choice among all legal placements (the board is nearly blocked); -1 when none. */
static int exact_choice(const Board *B, const Pos *P, const int8_t *mine, int np, uint64_t *rng, int *pi, int *pc)
{
    uint32_t masks[N_PIECES];
    int total = 0;
    for (int i = 0; i < np; i++) {
        masks[i] = piece_cells(B, P, mine[i]);
        total += __builtin_popcount(masks[i]);
    }
    if (!total) return -1;
    int k = (int)below_n((uint32_t)(rnext(rng) >> 32), (uint32_t)total);
    for (int i = 0; i < np; i++) {
        int cnt = __builtin_popcount(masks[i]);
        if (k < cnt) {
            uint32_t m = masks[i];
            while (k--) m &= m - 1;
            *pi = i;
            *pc = __builtin_ctz(m);
            return mine[i];
        }
        k -= cnt;
    }
    return -1; /* unreachable */
}

static int guided_choice(const Board *B, Pos *P, const int8_t *mine, int np, int k, uint64_t *rng, int *pi, int *pc)
{
    int me = P->turn, best = -99, bp = -1, bi = -1, bc = -1, found = 0;
    for (int t = 0; t < 12 * k; t++) {
        int i, c;
        int p = sample_legal(B, P, mine, np, rng, &i, &c);
        if (p < 0) continue;
        int ds[2];
        effect(B, P, piece_size(p), c, ds);
        int d = ds[me] - ds[1 - me];
        if (d > best) {
            best = d;
            bp = p;
            bi = i;
            bc = c;
        }
        if (++found >= k) break;
    }
    if (bp < 0) return exact_choice(B, P, mine, np, rng, pi, pc);
    *pi = bi;
    *pc = bc;
    return bp;
}

/* The cells where the side to move can put a piece of each size (a placement's effect depends
   only on the piece's size, so the playouts choose a (size, cell) first). */
static inline void size_cells(const Board *B, const Pos *P, const int8_t *mine, int np, uint32_t by_size[5])
{
    for (int sz = 0; sz < 5; sz++) by_size[sz] = 0;
    for (int i = 0; i < np; i++) by_size[piece_size(mine[i])] |= piece_cells(B, P, mine[i]);
}

/* Play a chosen (size, cell): a piece of that size that fits the cell, at random among them. */
static int piece_for(const Board *B, const Pos *P, const int8_t *mine, int np, int size, int c, uint64_t *rng,
                     int *pi, int *pc)
{
    int bi = -1;
    uint32_t ties = 0;
    for (int i = 0; i < np; i++)
        if (piece_size(mine[i]) == size && (piece_cells(B, P, mine[i]) >> c & 1) &&
            !below_n((uint32_t)(rnext(rng) >> 32), ++ties))
            bi = i;
    *pi = bi;
    *pc = c;
    return mine[bi];
}

/* Facing the opponent's seven: a placement that breaks it, the best for the mover's margin
   among the first `k` breaking ones found in random order; -1 when none does.  Without this
   rule guided playouts end ~99% of the time by a careless seven after ~31 plies, while real
   games mostly run to exhaustion. */
static int defend_choice(const Board *B, Pos *P, const int8_t *mine, int np, int k, uint64_t *rng, int *pi, int *pc)
{
    int me = P->turn, opp = 1 - me, best = -99, bs = -1, bc = -1, found = 0;
    uint32_t held = 0; /* cells on an alignment the opponent leads: only those can lower it */
    for (int c = 0; c < B->n_cells; c++)
        for (int t = 0; t < B->n_through[c]; t++)
            if (P->leader[B->through[c][t]] == opp) held |= 1u << c;
    /* A placement's effect depends only on the piece's size: the candidates are (size, cell). */
    uint32_t by_size[5];
    size_cells(B, P, mine, np, by_size);
    for (int sz = 0; sz < 5; sz++) by_size[sz] &= held;
    int16_t cand[5 * MAXC];
    int n = 0;
    for (int sz = 0; sz < 5; sz++)
        for (uint32_t m = by_size[sz]; m; m &= m - 1) cand[n++] = (int16_t)(sz * MAXC + __builtin_ctz(m));
    for (int j = 0; j < n && found < k; j++) { /* partial Fisher-Yates: random order */
        int r = j + (int)below_n((uint32_t)(rnext(rng) >> 32), (uint32_t)(n - j));
        int16_t t = cand[r];
        cand[r] = cand[j];
        int sz = t / MAXC, c = t % MAXC, ds[2];
        effect(B, P, sz, c, ds);
        if (P->score[opp] + ds[opp] >= SEVEN) continue;
        found++;
        if (ds[me] - ds[opp] > best) {
            best = ds[me] - ds[opp];
            bs = sz;
            bc = c;
        }
    }
    if (bs < 0) return -1;
    return piece_for(B, P, mine, np, bs, bc, rng, pi, pc);
}

/* Greedy playouts' memo of placement effects: ds[0] and ds[1] of stacking a piece of each size
   on each cell.  A placement on cell c changes only the effects on c and on the cells sharing an
   alignment with c (B->aligned[c]), so about a third of the table is recomputed each ply. */
typedef struct {
    int8_t ds[5][MAXC][2];
    uint32_t valid[5];
} Effects;

static inline void effects_forget(const Board *B, Effects *E, int c)
{
    uint32_t keep = ~(B->aligned[c] | (1u << c));
    for (int sz = 0; sz < 5; sz++) E->valid[sz] &= keep;
}

/* The best placement over every legal (size, cell) pair by immediate margin, ties at random
   (`guided` = 0, "greedy" playouts).  A placement's effect depends only on the piece's size, so
   at most 5 x 26 effects are looked at instead of one per legal move (~400).  Facing the
   opponent's seven the placements that break it come first (when one exists): the others lose
   at once.  Sampling k moves (guided_choice) misses most of the few moves that gain anything;
   taking them all makes both sides of a playout play like the greedy level. */
static int greedy_choice(const Board *B, Pos *P, Effects *E, const int8_t *mine, int np, uint64_t *rng, int *pi,
                         int *pc)
{
    int me = P->turn, opp = 1 - me, facing = P->score[opp] >= SEVEN;
    uint32_t by_size[5];
    size_cells(B, P, mine, np, by_size);
    int best = -999, bs = -1, bc = -1;
    uint32_t ties = 0;
    for (int sz = 0; sz < 5; sz++) {
        for (uint32_t m = by_size[sz] & ~E->valid[sz]; m; m &= m - 1) {
            int c = __builtin_ctz(m), ds[2];
            effect(B, P, sz, c, ds);
            E->ds[sz][c][0] = (int8_t)ds[0];
            E->ds[sz][c][1] = (int8_t)ds[1];
        }
        E->valid[sz] |= by_size[sz];
        for (uint32_t m = by_size[sz]; m; m &= m - 1) {
            int c = __builtin_ctz(m);
            int dme = E->ds[sz][c][me], dopp = E->ds[sz][c][opp];
            int d = dme - dopp;
            if (facing && P->score[opp] + dopp < SEVEN) d += 100;
            if (d > best) {
                best = d;
                bs = sz;
                bc = c;
                ties = 1;
            } else if (d == best && !below_n((uint32_t)(rnext(rng) >> 32), ++ties)) {
                bs = sz;
                bc = c;
            }
        }
    }
    if (bs < 0) return -1;
    return piece_for(B, P, mine, np, bs, bc, rng, pi, pc);
}

/* Play P to the end (P is modified).  Records codes into rec (if not NULL, room for 128).
   `guided`: 1 uniform moves, k > 1 the best of k samples, 0 the best of all (greedy_choice).
   `defend`: a side facing the opponent's seven breaks it when it can (defend_choice).
   `plies` > 0 stops after that many plies with the game still open (NO_OUTCOME; P is where it
   stopped): a search with a network judges that position instead of playing on (`trunc`). */
static int playout_upto(const Board *B, Pos *P, uint64_t *rng, int guided, int defend, int *rec, int *nrec,
                        int plies)
{
    if (P->outcome != NO_OUTCOME) return P->outcome;
    int played = 0;
    Hands H;
    hands_init(P, &H);
    Effects E;
    memset(E.valid, 0, sizeof(E.valid));
    for (;;) {
        int turn = P->turn, other = 1 - turn;
        int before = P->score[other];
        int8_t *mine = H.pieces[turn];
        int np = H.n[turn], p = -1, i = -1, c = -1;
        if (np && guided == 0) {
            p = greedy_choice(B, P, &E, mine, np, rng, &i, &c);
        } else if (np && defend && before >= SEVEN) {
            p = defend_choice(B, P, mine, np, guided, rng, &i, &c);
        }
        if (p >= 0) {
            /* chosen above */
        } else if (np && guided > 1) {
            p = guided_choice(B, P, mine, np, guided, rng, &i, &c);
        } else if (np) {
            int t;
            for (t = 0; t < 12; t++) {
                p = sample_legal(B, P, mine, np, rng, &i, &c);
                if (p >= 0) break;
            }
            if (t == 12) p = exact_choice(B, P, mine, np, rng, &i, &c);
        }
        if (p < 0) {
            P->passes++;
            P->last_cell = -1;
            if (rec && *nrec < 128) rec[(*nrec)++] = B->pass_code;
        } else {
            mine[i] = mine[np - 1];
            H.n[turn] = np - 1;
            P->reserve[turn] ^= 1u << p;
            if (rec && *nrec < 128) rec[(*nrec)++] = p * B->n_cells + c;
            place(B, P, p, c);
            P->passes = 0;
            if (guided == 0) effects_forget(B, &E, c);
        }
        P->turn = (int8_t)other;
        /* Seven-monolith rule: the opponent wins if it held 7 before this turn and still does. */
        if (before >= SEVEN && P->score[other] >= SEVEN) return P->outcome = (int8_t)other;
        if (P->passes >= 2)
            return P->outcome = P->score[0] > P->score[1] ? 0 : P->score[1] > P->score[0] ? 1 : DRAW;
        if (++played == plies) return NO_OUTCOME;
    }
}

static int playout(const Board *B, Pos *P, uint64_t *rng, int guided, int defend, int *rec, int *nrec)
{
    return playout_upto(B, P, rng, guided, defend, rec, nrec, 0);
}

/* ------------------------------------------------------------------------------------ */
/* Python types.                                                                         */

static PyTypeObject BoardType;
static PyTypeObject StateType;

typedef struct {
    PyObject_HEAD
    BoardObject *board;
    PyObject *tables; /* the Python core.Tables this board was built from */
    Pos pos;
    Pos *stack;       /* positions before each pushed move (copy-make undo) */
    int *codes;       /* the move codes pushed */
    Py_ssize_t ply, cap;
} StateObject;

static int int_list(PyObject *seq, int *out, int max, int lo, int hi, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        PyErr_Format(PyExc_ValueError, "%s: %zd items, at most %d supported", what, n, max);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (v < lo || v >= hi) {
            PyErr_Format(PyExc_ValueError, "%s: %ld out of range [%d, %d)", what, v, lo, hi);
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (int)v;
    }
    Py_DECREF(fast);
    return (int)n;
}

static int u64_list(PyObject *seq, uint64_t *out, Py_ssize_t want, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != want) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd keys", what, want);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < want; i++) {
        out[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

static int seq_item_list(PyObject *seq, Py_ssize_t i, int *out, int max, int lo, int hi, const char *what)
{
    PyObject *item = PySequence_GetItem(seq, i);
    if (!item) return -1;
    int n = int_list(item, out, max, lo, hi, what);
    Py_DECREF(item);
    return n;
}

static PyObject *Board_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    int n_cells, camp;
    PyObject *south, *north, *through, *aligned, *zt, *zr, *zlast, *zpass, *moves;
    unsigned long long zturn;
    static char *kwlist[] = {"n_cells", "camp_size", "align_south", "align_north", "through", "aligned",
                             "z_tower", "z_reserve", "z_turn", "z_last", "z_pass", "move_objects", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iiOOOOOOKOOO!:Board", kwlist, &n_cells, &camp, &south, &north,
                                     &through, &aligned, &zt, &zr, &zturn, &zlast, &zpass, &PyTuple_Type, &moves))
        return NULL;
    if (n_cells < 2 || n_cells > MAXC || camp < 1 || camp >= n_cells) {
        PyErr_Format(PyExc_ValueError, "board: %d cells (camp %d) unsupported, at most %d", n_cells, camp, MAXC);
        return NULL;
    }
    BoardObject *self = (BoardObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    Board *B = &self->b;
    B->n_cells = n_cells;
    B->camp_size = camp;
    B->pass_code = N_PIECES * n_cells;
    Py_ssize_t na = PySequence_Size(south);
    if (na < 0) goto fail;
    if (na > MAXA || PySequence_Size(north) != na) {
        PyErr_Format(PyExc_ValueError, "board: %zd alignments unsupported, at most %d", na, MAXA);
        goto fail;
    }
    B->n_align = (int)na;
    for (Py_ssize_t a = 0; a < na; a++) {
        if ((B->n_south[a] = seq_item_list(south, a, B->south[a], MAXW, 0, n_cells, "align_south")) < 0) goto fail;
        if ((B->n_north[a] = seq_item_list(north, a, B->north[a], MAXW, 0, n_cells, "align_north")) < 0) goto fail;
    }
    B->w2 = 1;
    for (int a = 0; a < B->n_align; a++) {
        if (B->n_south[a] < 1 || B->n_north[a] < 1) {
            PyErr_SetString(PyExc_ValueError, "board: every alignment needs cells in both camps");
            goto fail;
        }
        if (B->n_south[a] > 2 || B->n_north[a] > 2) B->w2 = 0;
        for (int i = 0; i < 2; i++) {
            B->south2[a][i] = i < B->n_south[a] ? B->south[a][i] : n_cells;
            B->north2[a][i] = i < B->n_north[a] ? B->north[a][i] : n_cells;
        }
    }
    if (PySequence_Size(through) != n_cells || PySequence_Size(aligned) != n_cells) {
        PyErr_SetString(PyExc_ValueError, "board: through/aligned need one entry per cell");
        goto fail;
    }
    for (int c = 0; c < n_cells; c++) {
        int tmp[MAXC];
        if ((B->n_through[c] = seq_item_list(through, c, B->through[c], MAXT, 0, (int)na, "through")) < 0) goto fail;
        int k = seq_item_list(aligned, c, tmp, MAXC, 0, n_cells, "aligned");
        if (k < 0) goto fail;
        B->aligned[c] = 0;
        for (int i = 0; i < k; i++) B->aligned[c] |= 1u << tmp[i];
        PyObject *row = PySequence_GetItem(zt, c);
        if (!row) goto fail;
        int bad = u64_list(row, B->z_tower[c], FULL_HEIGHT * N_PIECES, "z_tower");
        Py_DECREF(row);
        if (bad) goto fail;
    }
    for (int s = 0; s < 2; s++) {
        PyObject *row = PySequence_GetItem(zr, s);
        if (!row) goto fail;
        int bad = u64_list(row, B->z_reserve[s], N_PIECES, "z_reserve");
        Py_DECREF(row);
        if (bad) goto fail;
    }
    B->z_turn = zturn;
    if (u64_list(zlast, B->z_last, B->pass_code + 1, "z_last") || u64_list(zpass, B->z_pass, 3, "z_pass")) goto fail;
    if (PyTuple_GET_SIZE(moves) != B->pass_code + 1) {
        PyErr_SetString(PyExc_ValueError, "board: move_objects needs one Move per code");
        goto fail;
    }
    Py_INCREF(moves);
    self->moves = moves;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static void Board_dealloc(BoardObject *self)
{
    Py_XDECREF(self->moves);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject BoardType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "jericho_game._kernel.Board",
    .tp_basicsize = sizeof(BoardObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Precomputed board tables (a C copy of core.Tables); built by jericho_game.kernel.",
    .tp_new = Board_new,
    .tp_dealloc = (destructor)Board_dealloc,
};

/* -- State ------------------------------------------------------------------------------ */

#define ST(o) (((StateObject *)(o)))
#define BRD(o) (&((StateObject *)(o))->board->b)

static PyObject *State_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *board, *tables;
    static char *kwlist[] = {"board", "tables", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O:State", kwlist, &BoardType, &board, &tables)) return NULL;
    StateObject *self = (StateObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    Py_INCREF(board);
    Py_INCREF(tables);
    self->board = (BoardObject *)board;
    self->tables = tables;
    pos_init(&self->board->b, &self->pos);
    return (PyObject *)self;
}

static void State_dealloc(StateObject *self)
{
    PyMem_Free(self->stack);
    PyMem_Free(self->codes);
    Py_XDECREF(self->board);
    Py_XDECREF(self->tables);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int reserve_stack(StateObject *s, Py_ssize_t need)
{
    if (need <= s->cap) return 0;
    Py_ssize_t cap = s->cap ? s->cap * 2 : 64;
    while (cap < need) cap *= 2;
    Pos *st = PyMem_Realloc(s->stack, (size_t)cap * sizeof(Pos));
    if (!st) return -1;
    s->stack = st;
    int *cd = PyMem_Realloc(s->codes, (size_t)cap * sizeof(int));
    if (!cd) return -1;
    s->codes = cd;
    s->cap = cap;
    return 0;
}

static int code_arg(PyObject *self, PyObject *arg, long *out)
{
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "a move code must be an int, not %.80s", Py_TYPE(arg)->tp_name);
        return -1;
    }
    long code = PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred()) return -1;
    if (code < 0 || code > BRD(self)->pass_code) {
        PyErr_Format(PyExc_ValueError, "move code %ld out of range [0, %d]", code, BRD(self)->pass_code);
        return -1;
    }
    *out = code;
    return 0;
}

static PyObject *State_push(PyObject *self, PyObject *arg)
{
    long code;
    if (code_arg(self, arg, &code)) return NULL;
    StateObject *s = ST(self);
    if (s->pos.outcome != NO_OUTCOME) {
        PyErr_SetString(PyExc_ValueError, "the game is over: no move can be pushed");
        return NULL;
    }
    if (!is_legal(BRD(self), &s->pos, code)) {
        PyErr_Format(PyExc_ValueError, "illegal move code %ld in this position", code);
        return NULL;
    }
    if (reserve_stack(s, s->ply + 1)) return PyErr_NoMemory();
    s->stack[s->ply] = s->pos;
    s->codes[s->ply++] = (int)code;
    apply(BRD(self), &s->pos, (int)code);
    Py_RETURN_NONE;
}

static PyObject *State_pop(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    StateObject *s = ST(self);
    if (!s->ply) {
        PyErr_SetString(PyExc_IndexError, "pop from empty history: no move to undo");
        return NULL;
    }
    s->pos = s->stack[--s->ply];
    return PyLong_FromLong(s->codes[s->ply]);
}

static PyObject *State_copy(PyObject *self, PyObject *args, PyObject *kwds)
{
    int with_history = 0;
    static char *kwlist[] = {"with_history", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p:copy", kwlist, &with_history)) return NULL;
    StateObject *s = ST(self);
    StateObject *o = (StateObject *)StateType.tp_alloc(&StateType, 0);
    if (!o) return NULL;
    Py_INCREF(s->board);
    Py_INCREF(s->tables);
    o->board = s->board;
    o->tables = s->tables;
    o->pos = s->pos;
    if (with_history && s->ply) {
        if (reserve_stack(o, s->ply)) {
            Py_DECREF(o);
            return PyErr_NoMemory();
        }
        memcpy(o->stack, s->stack, (size_t)s->ply * sizeof(Pos));
        memcpy(o->codes, s->codes, (size_t)s->ply * sizeof(int));
        o->ply = s->ply;
    }
    return (PyObject *)o;
}

static PyObject *codes_to_list(const int *codes, int n)
{
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLong(codes[i]);
        if (!v) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, v);
    }
    return out;
}

static PyObject *State_legal_codes(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    int codes[MAXCODES];
    return codes_to_list(codes, gen_legal(BRD(self), &ST(self)->pos, codes));
}

/* ------------------------------------------------------------------------------------ */
/* LegalMoves: the legal moves of one position as an immutable, lazy sequence.           */
/*
 * Why not a list: a list of ~400 interned Move objects costs ~1.5 us to build and free
 * (one refcount write per element, scattered over memory), more than generating the moves
 * and playing one.  The moves of a position are a few (piece, cell mask) groups, so this
 * snapshot stores those and finds the i-th move on demand: building it is O(pieces), len()
 * is O(1), indexing O(pieces + cells).  Anything list-like (iteration, slicing, `in`,
 * equality with a list) materialises the interned Move objects once.
 */

typedef struct {
    PyObject_HEAD
    PyObject *moves;             /* the board's tuple of interned Move objects (by code) */
    int n, n_groups;
    int base[N_PIECES];          /* code of cell 0 for the group's piece (or the pass code) */
    uint32_t cells[N_PIECES];    /* cells of the group, in code order */
    int start[N_PIECES];         /* index of the group's first move */
} LegalMovesObject;

static PyTypeObject LegalMovesType;


static PyObject *legal_moves_of(BoardObject *board, const Pos *P)
{
    const Board *B = &board->b;
    LegalMovesObject *o = PyObject_New(LegalMovesObject, &LegalMovesType);
    if (!o) return NULL;
    Py_INCREF(board->moves);
    o->moves = board->moves;
    int piece[N_PIECES];
    o->n_groups = placement_groups(B, P, piece, o->cells);
    o->n = 0;
    for (int g = 0; g < o->n_groups; g++) {
        o->base[g] = piece[g] * B->n_cells;
        o->start[g] = o->n;
        o->n += __builtin_popcount(o->cells[g]);
    }
    if (!o->n && P->outcome == NO_OUTCOME) { /* passing is forced: one "cell" at the pass code */
        o->n_groups = 1;
        o->base[0] = B->pass_code;
        o->cells[0] = 1;
        o->start[0] = 0;
        o->n = 1;
    }
    return (PyObject *)o;
}

static void LegalMoves_dealloc(LegalMovesObject *self)
{
    Py_XDECREF(self->moves);
    PyObject_Free(self);
}

static Py_ssize_t LegalMoves_len(LegalMovesObject *self) { return self->n; }

/* The code of move i, 0 <= i < n. */
static int lm_code(const LegalMovesObject *self, int i)
{
    int g = self->n_groups - 1;
    while (self->start[g] > i) g--;
    uint32_t m = self->cells[g];
    for (int k = i - self->start[g]; k > 0; k--) m &= m - 1;
    return self->base[g] + __builtin_ctz(m);
}

static PyObject *LegalMoves_item(LegalMovesObject *self, Py_ssize_t i)
{
    if (i < 0 || i >= self->n) {
        PyErr_SetString(PyExc_IndexError, "legal move index out of range");
        return NULL;
    }
    PyObject *m = PyTuple_GET_ITEM(self->moves, lm_code(self, (int)i));
    Py_INCREF(m);
    return m;
}

/* The moves as a fresh list of the interned Move objects. */
static PyObject *LegalMoves_list(LegalMovesObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *out = PyList_New(self->n);
    if (!out) return NULL;
    Py_ssize_t k = 0;
    for (int g = 0; g < self->n_groups; g++) {
        uint32_t m = self->cells[g];
        while (m) {
            PyObject *mv = PyTuple_GET_ITEM(self->moves, self->base[g] + __builtin_ctz(m));
            m &= m - 1;
            Py_INCREF(mv);
            PyList_SET_ITEM(out, k++, mv);
        }
    }
    return out;
}

static PyObject *LegalMoves_subscript(LegalMovesObject *self, PyObject *key)
{
    if (PyIndex_Check(key)) {
        Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred()) return NULL;
        if (i < 0) i += self->n;
        return LegalMoves_item(self, i);
    }
    if (PySlice_Check(key)) {
        PyObject *all = LegalMoves_list(self, NULL);
        if (!all) return NULL;
        PyObject *out = PyObject_GetItem(all, key);
        Py_DECREF(all);
        return out;
    }
    PyErr_Format(PyExc_TypeError, "legal move indices must be integers or slices, not %.80s",
                 Py_TYPE(key)->tp_name);
    return NULL;
}

static PyObject *LegalMoves_iter(LegalMovesObject *self)
{
    PyObject *all = LegalMoves_list(self, NULL);
    if (!all) return NULL;
    PyObject *it = PyObject_GetIter(all);
    Py_DECREF(all);
    return it;
}

/* Delegate to the materialised list (contains, index, count, repr, comparison). */
static PyObject *lm_as_list(PyObject *obj)
{
    if (Py_TYPE(obj) == &LegalMovesType) return LegalMoves_list((LegalMovesObject *)obj, NULL);
    return PySequence_List(obj);
}

static int LegalMoves_contains(LegalMovesObject *self, PyObject *x)
{
    PyObject *all = LegalMoves_list(self, NULL);
    if (!all) return -1;
    int r = PySequence_Contains(all, x);
    Py_DECREF(all);
    return r;
}

static PyObject *lm_delegate(LegalMovesObject *self, const char *method, PyObject *args)
{
    PyObject *all = LegalMoves_list(self, NULL);
    if (!all) return NULL;
    PyObject *fn = PyObject_GetAttrString(all, method);
    PyObject *out = fn ? PyObject_Call(fn, args, NULL) : NULL;
    Py_XDECREF(fn);
    Py_DECREF(all);
    return out;
}

static PyObject *LegalMoves_index(LegalMovesObject *self, PyObject *args)
{
    return lm_delegate(self, "index", args);
}

static PyObject *LegalMoves_count(LegalMovesObject *self, PyObject *args)
{
    return lm_delegate(self, "count", args);
}

/* Equal to a list, tuple or LegalMoves holding the same moves in the same order, so that
   `game.legal_moves() == [PASS]` reads as it always did. */
static PyObject *LegalMoves_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) ||
        !(PyList_Check(b) || PyTuple_Check(b) || Py_TYPE(b) == &LegalMovesType) ||
        !(PyList_Check(a) || PyTuple_Check(a) || Py_TYPE(a) == &LegalMovesType))
        Py_RETURN_NOTIMPLEMENTED;
    /* Different lengths decide at once: `moves == [PASS]` must not build a list of 400 moves. */
    Py_ssize_t na = PyObject_Length(a), nb = PyObject_Length(b);
    if (na < 0 || nb < 0) return NULL;
    if (na != nb) return PyBool_FromLong(op == Py_NE);
    PyObject *la = lm_as_list(a), *lb = la ? lm_as_list(b) : NULL;
    PyObject *out = lb ? PyObject_RichCompare(la, lb, op) : NULL;
    Py_XDECREF(la);
    Py_XDECREF(lb);
    return out;
}

static PyObject *LegalMoves_repr(LegalMovesObject *self)
{
    PyObject *all = LegalMoves_list(self, NULL);
    if (!all) return NULL;
    PyObject *out = PyUnicode_FromFormat("LegalMoves(%R)", all);
    Py_DECREF(all);
    return out;
}

/* Pickles (and copies) as a plain list: the snapshot has no position to come back to. */
static PyObject *LegalMoves_reduce(LegalMovesObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *all = LegalMoves_list(self, NULL);
    if (!all) return NULL;
    return Py_BuildValue("(O(N))", (PyObject *)&PyList_Type, all);
}

static PySequenceMethods LegalMoves_as_sequence = {
    .sq_length = (lenfunc)LegalMoves_len,
    .sq_item = (ssizeargfunc)LegalMoves_item,
    .sq_contains = (objobjproc)LegalMoves_contains,
};

static PyMappingMethods LegalMoves_as_mapping = {
    .mp_length = (lenfunc)LegalMoves_len,
    .mp_subscript = (binaryfunc)LegalMoves_subscript,
};

static PyMethodDef LegalMoves_methods[] = {
    {"index", (PyCFunction)LegalMoves_index, METH_VARARGS, "index(move[, start[, stop]]): as list.index."},
    {"count", (PyCFunction)LegalMoves_count, METH_VARARGS, "count(move): as list.count."},
    {"to_list", (PyCFunction)LegalMoves_list, METH_NOARGS, "The moves as a new list."},
    {"__reduce__", (PyCFunction)LegalMoves_reduce, METH_NOARGS, "Pickled as a plain list."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LegalMovesType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "jericho_game._kernel.LegalMoves",
    .tp_basicsize = sizeof(LegalMovesObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_SEQUENCE,
    .tp_doc = "The legal moves of one position: an immutable sequence of interned Move objects "
              "(a snapshot; equal to a list of the same moves).",
    .tp_dealloc = (destructor)LegalMoves_dealloc,
    .tp_as_sequence = &LegalMoves_as_sequence,
    .tp_as_mapping = &LegalMoves_as_mapping,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_richcompare = LegalMoves_richcompare,
    .tp_iter = (getiterfunc)LegalMoves_iter,
    .tp_repr = (reprfunc)LegalMoves_repr,
    .tp_methods = LegalMoves_methods,
};

static PyObject *State_legal_moves(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return legal_moves_of(ST(self)->board, &ST(self)->pos);
}

/* [(piece, cell mask), ...] of the pieces with a legal placement (core.State.legal_groups). */
static PyObject *State_legal_groups(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    int piece[N_PIECES];
    uint32_t cells[N_PIECES];
    int n = placement_groups(BRD(self), &ST(self)->pos, piece, cells);
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int g = 0; g < n; g++) {
        PyObject *pair = Py_BuildValue("(ik)", piece[g], (unsigned long)cells[g]);
        if (!pair) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, g, pair);
    }
    return out;
}

static PyObject *State_is_legal(PyObject *self, PyObject *arg)
{
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "a move code must be an int, not %.80s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    int overflow;
    long code = PyLong_AsLongAndOverflow(arg, &overflow);
    if (overflow) Py_RETURN_FALSE;
    return PyBool_FromLong(is_legal(BRD(self), &ST(self)->pos, code));
}

static PyObject *State_has_placement(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(has_placement(BRD(self), &ST(self)->pos));
}

static int piece_arg(PyObject *arg, int hi, const char *what)
{
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v >= hi) {
        PyErr_Format(PyExc_ValueError, "%s %ld out of range [0, %d)", what, v, hi);
        return -1;
    }
    return (int)v;
}

static PyObject *State_fits(PyObject *self, PyObject *arg)
{
    int p = piece_arg(arg, N_PIECES, "piece");
    if (p < 0) return NULL;
    return PyLong_FromUnsignedLong(fits(&ST(self)->pos, p));
}

static PyObject *State_forbidden_copy_cells(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromUnsignedLong(forbidden_copy(BRD(self), &ST(self)->pos));
}

static PyObject *State_hash_key(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromUnsignedLongLong(hash_key(BRD(self), &ST(self)->pos));
}

static PyObject *State_leader_changes(PyObject *self, PyObject *args)
{
    int size, cell;
    if (!PyArg_ParseTuple(args, "ii:leader_changes", &size, &cell)) return NULL;
    const Board *B = BRD(self);
    if (size < 0 || size >= 5 || cell < 0 || cell >= B->n_cells) {
        PyErr_Format(PyExc_ValueError, "leader_changes: size %d or cell %d out of range", size, cell);
        return NULL;
    }
    Pos *P = &ST(self)->pos;
    uint16_t old = P->key[cell];
    P->key[cell] = stacked_key(P, size, cell);
    PyObject *out = PyList_New(0);
    for (int i = 0; out && i < B->n_through[cell]; i++) {
        int a = B->through[cell][i];
        int nl = leader_of(B, P->key, a);
        if (nl != P->leader[a]) {
            PyObject *t = Py_BuildValue("(iii)", a, (int)P->leader[a], nl);
            if (!t || PyList_Append(out, t)) Py_CLEAR(out);
            Py_XDECREF(t);
        }
    }
    P->key[cell] = old;
    return out;
}

static PyObject *State_margin_deltas(PyObject *self, PyObject *arg)
{
    const Board *B = BRD(self);
    Pos *P = &ST(self)->pos;
    PyObject *fast = PySequence_Fast(arg, "margin_deltas needs a list of move codes");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject *out = PyList_New(n);
    int8_t cache[5][MAXC];
    memset(cache, 0x7F, sizeof(cache));
    int me = P->turn;
    for (Py_ssize_t i = 0; out && i < n; i++) {
        long code;
        if (code_arg(self, PySequence_Fast_GET_ITEM(fast, i), &code)) {
            Py_CLEAR(out);
            break;
        }
        int d = 0;
        if (code != B->pass_code) {
            int s = piece_size((int)(code / B->n_cells)), c = (int)(code % B->n_cells);
            if (cache[s][c] == 0x7F) {
                int ds[2];
                effect(B, P, s, c, ds);
                cache[s][c] = (int8_t)(ds[me] - ds[1 - me]);
            }
            d = cache[s][c];
        }
        PyList_SET_ITEM(out, i, PyLong_FromLong(d));
    }
    Py_DECREF(fast);
    return out;
}

static PyObject *State_breaks_possible(PyObject *self, PyObject *arg)
{
    int holder = piece_arg(arg, 2, "side");
    if (holder < 0) return NULL;
    return PyBool_FromLong(breaks_possible(BRD(self), &ST(self)->pos, holder));
}

static PyObject *State_history_codes(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return codes_to_list(ST(self)->codes, (int)ST(self)->ply);
}

/* load(towers, reserves, turn, last, passes, outcome): like core.State.load (no history). */
static PyObject *State_load(PyObject *self, PyObject *args)
{
    PyObject *towers, *last;
    unsigned long r0, r1;
    int turn, passes, outcome;
    if (!PyArg_ParseTuple(args, "O!(kk)iOii:load", &PyDict_Type, &towers, &r0, &r1, &turn, &last, &passes, &outcome))
        return NULL;
    const Board *B = BRD(self);
    uint32_t full = (1u << N_PIECES) - 1;
    if ((r0 & ~full) || (r1 & ~full) || turn < 0 || turn > 1 || passes < 0 || passes > 2 || outcome < -1 ||
        outcome > 2) {
        PyErr_SetString(PyExc_ValueError, "load: reserves, turn, passes or outcome out of range");
        return NULL;
    }
    Pos P;
    pos_init(B, &P);
    P.reserve[0] = (uint32_t)r0;
    P.reserve[1] = (uint32_t)r1;
    uint64_t z = 0;
    for (int s = 0; s < 2; s++)
        for (int p = 0; p < N_PIECES; p++)
            if (P.reserve[s] >> p & 1) z ^= B->z_reserve[s][p];
    P.zhash = z;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(towers, &pos, &key, &value)) {
        int c = piece_arg(key, B->n_cells, "cell");
        if (c < 0) return NULL;
        int pieces[FULL_HEIGHT + 1];
        int k = int_list(value, pieces, FULL_HEIGHT, 0, N_PIECES, "tower");
        if (k < 0) return NULL;
        for (int i = 0; i < k; i++) {
            if (P.height[c] >= FULL_HEIGHT) {
                PyErr_SetString(PyExc_ValueError, "load: tower taller than 4");
                return NULL;
            }
            place(B, &P, pieces[i], c);
        }
    }
    P.turn = (int8_t)turn;
    if (last == Py_None) {
        P.last_cell = -1;
        P.last_piece = -1;
        P.last_below = 0;
    } else {
        int p, c;
        if (!PyArg_ParseTuple(last, "ii:last", &p, &c)) return NULL;
        if (p < 0 || p >= N_PIECES || c < 0 || c >= B->n_cells || !P.height[c]) {
            PyErr_SetString(PyExc_ValueError, "load: last placement out of range");
            return NULL;
        }
        P.last_cell = (int8_t)c;
        P.last_piece = (int8_t)p;
        P.last_below = P.code[c] & ((1u << (5 * (P.height[c] - 1))) - 1);
    }
    P.passes = (int8_t)passes;
    P.outcome = (int8_t)outcome;
    ST(self)->pos = P;
    ST(self)->ply = 0;
    Py_RETURN_NONE;
}

static PyObject *State_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyErr_SetString(PyExc_TypeError, "kernel states cannot be pickled: pickle the Game or its position text");
    (void)self;
    return NULL;
}

static PyMethodDef State_methods[] = {
    {"push", State_push, METH_O, "Play a legal move code; raises ValueError for an illegal one."},
    {"pop", State_pop, METH_NOARGS, "Undo the last push; returns its code.  IndexError at the start."},
    {"copy", (PyCFunction)(void (*)(void))State_copy, METH_VARARGS | METH_KEYWORDS,
     "An independent copy; the undo history only with with_history=True."},
    {"legal_codes", State_legal_codes, METH_NOARGS, "Legal move codes ([pass] when forced, [] when over)."},
    {"legal_groups", State_legal_groups, METH_NOARGS, "[(piece, cell mask), ...] of the legal placements."},
    {"legal_moves", State_legal_moves, METH_NOARGS, "Legal moves: a LegalMoves sequence of interned Move objects."},
    {"is_legal", State_is_legal, METH_O, "Whether a move code is legal here."},
    {"has_placement", State_has_placement, METH_NOARGS, "Whether the side to move can place a piece."},
    {"fits", State_fits, METH_O, "Cells where a piece may stack (reserve and asymmetry aside)."},
    {"forbidden_copy_cells", State_forbidden_copy_cells, METH_NOARGS, "Cells barred by the asymmetry rule."},
    {"hash_key", State_hash_key, METH_NOARGS, "64-bit Zobrist key (same keys as core.State)."},
    {"leader_changes", State_leader_changes, METH_VARARGS, "(alignment, old, new) for stacking a size on a cell."},
    {"margin_deltas", State_margin_deltas, METH_O, "Immediate monolith-margin change of each move code."},
    {"breaks_possible", State_breaks_possible, METH_O, "Whether the mover can bring holder below 7."},
    {"history_codes", State_history_codes, METH_NOARGS, "Move codes pushed, oldest first."},
    {"load", State_load, METH_VARARGS, "Reset to a described position (no history)."},
    {"__reduce__", State_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* Read-only attributes, as fresh Python ints and lists (the C arrays stay private). */
static PyObject *u32_list(const uint32_t *v, int n)
{
    PyObject *out = PyList_New(n);
    for (int i = 0; out && i < n; i++) PyList_SET_ITEM(out, i, PyLong_FromUnsignedLong(v[i]));
    return out;
}

#define GETTER(name, expr)                                                   \
    static PyObject *State_get_##name(PyObject *self, void *Py_UNUSED(cl)) \
    {                                                                        \
        const Pos *P = &ST(self)->pos;                                       \
        (void)P;                                                             \
        return expr;                                                         \
    }

GETTER(turn, PyLong_FromLong(P->turn))
GETTER(passes, PyLong_FromLong(P->passes))
GETTER(outcome, PyLong_FromLong(P->outcome))
GETTER(last_cell, PyLong_FromLong(P->last_cell))
GETTER(last_piece, PyLong_FromLong(P->last_piece))
GETTER(last_below, PyLong_FromUnsignedLong(P->last_below))
GETTER(zhash, PyLong_FromUnsignedLongLong(P->zhash))
GETTER(ply, PyLong_FromSsize_t(ST(self)->ply))
GETTER(code, u32_list(P->code, BRD(self)->n_cells))
GETTER(size_free, u32_list(P->size_free, 5))
GETTER(colour_free, u32_list(P->colour_free, 5))
GETTER(reserve, u32_list(P->reserve, 2))
GETTER(score, Py_BuildValue("[ii]", P->score[0], P->score[1]))

static PyObject *State_get_tables(PyObject *self, void *Py_UNUSED(cl))
{
    Py_INCREF(ST(self)->tables);
    return ST(self)->tables;
}

static PyObject *State_get_height(PyObject *self, void *Py_UNUSED(cl))
{
    int n = BRD(self)->n_cells;
    PyObject *out = PyList_New(n);
    for (int i = 0; out && i < n; i++) PyList_SET_ITEM(out, i, PyLong_FromLong(ST(self)->pos.height[i]));
    return out;
}

static PyObject *State_get_key(PyObject *self, void *Py_UNUSED(cl))
{
    int n = BRD(self)->n_cells + 1; /* with the sentinel slot, like core.State.key */
    PyObject *out = PyList_New(n);
    for (int i = 0; out && i < n; i++) PyList_SET_ITEM(out, i, PyLong_FromLong(ST(self)->pos.key[i]));
    return out;
}

static PyObject *State_get_leader(PyObject *self, void *Py_UNUSED(cl))
{
    int n = BRD(self)->n_align;
    PyObject *out = PyList_New(n);
    for (int i = 0; out && i < n; i++) PyList_SET_ITEM(out, i, PyLong_FromLong(ST(self)->pos.leader[i]));
    return out;
}

#define GS(name, doc) {#name, State_get_##name, NULL, doc, NULL}
static PyGetSetDef State_getset[] = {
    GS(turn, "Side to move (0 South, 1 North)."),
    GS(passes, "Consecutive passes just made."),
    GS(outcome, "-1 (going on), 0, 1 or 2 (draw)."),
    GS(last_cell, "Cell of the opponent's last placement, -1 after a pass or at the start."),
    GS(last_piece, "Piece of the opponent's last placement."),
    GS(last_below, "Tower code under the last placement (asymmetry rule)."),
    GS(zhash, "Incremental Zobrist part of hash_key()."),
    GS(ply, "How many moves can be undone."),
    GS(code, "Tower codes, one per cell (a fresh list)."),
    GS(height, "Tower heights (a fresh list)."),
    GS(key, "Strength keys, with a sentinel slot (a fresh list)."),
    GS(size_free, "Per size: mask of cells that accept it (a fresh list)."),
    GS(colour_free, "Per colour: mask of cells that accept it (a fresh list)."),
    GS(reserve, "Per side: mask of pieces in reserve (a fresh list)."),
    GS(leader, "Per alignment: -1, 0 or 1 (a fresh list)."),
    GS(score, "Monoliths held [south, north] (a fresh list)."),
    GS(tables, "The core.Tables of the board."),
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject StateType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "jericho_game._kernel.State",
    .tp_basicsize = sizeof(StateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A position in the compiled kernel; the interface of jericho_game.core.State.",
    .tp_new = State_new,
    .tp_dealloc = (destructor)State_dealloc,
    .tp_methods = State_methods,
    .tp_getset = State_getset,
};

/* ------------------------------------------------------------------------------------ */
/* Module functions: playouts.                                                           */

static int seed_arg(PyObject *obj, uint64_t *seed)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "seed must be an int, not %.80s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    *seed = PyLong_AsUnsignedLongLongMask(obj);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *k_playout(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    PyObject *state, *seedobj, *moves = Py_None;
    int guided = 1, defend = 0;
    static char *kwlist[] = {"state", "seed", "guided", "moves", "defend", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O|iOp:playout", kwlist, &StateType, &state, &seedobj, &guided,
                                     &moves, &defend))
        return NULL;
    uint64_t rng;
    if (seed_arg(seedobj, &rng)) return NULL;
    if (guided < 0 || guided > 1000) {
        PyErr_Format(PyExc_ValueError, "guided must be in [0, 1000] (0: greedy over all placements), got %d", guided);
        return NULL;
    }
    if (moves != Py_None && !PyList_Check(moves)) {
        PyErr_SetString(PyExc_TypeError, "moves must be a list or None");
        return NULL;
    }
    Pos P = ST(state)->pos;
    int rec[128], nrec = 0;
    int res = playout(BRD(state), &P, &rng, guided, defend, moves != Py_None ? rec : NULL, &nrec);
    for (int i = 0; i < nrec; i++) {
        PyObject *v = PyLong_FromLong(rec[i]);
        if (!v || PyList_Append(moves, v)) {
            Py_XDECREF(v);
            return NULL;
        }
        Py_DECREF(v);
    }
    return PyLong_FromLong(res);
}

static PyObject *k_playouts(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    PyObject *state, *seedobj;
    long n;
    int guided = 1, defend = 0;
    static char *kwlist[] = {"state", "n", "seed", "guided", "defend", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!lO|ip:playouts", kwlist, &StateType, &state, &n, &seedobj, &guided,
                                     &defend))
        return NULL;
    uint64_t rng;
    if (seed_arg(seedobj, &rng)) return NULL;
    if (n < 0 || guided < 0 || guided > 1000) {
        PyErr_SetString(PyExc_ValueError, "playouts: n must be >= 0 and guided in [0, 1000]");
        return NULL;
    }
    long counts[3] = {0, 0, 0};
    const Board *B = BRD(state);
    Pos start = ST(state)->pos;
    Py_BEGIN_ALLOW_THREADS
    for (long i = 0; i < n; i++) {
        Pos P = start;
        counts[playout(B, &P, &rng, guided, defend, NULL, NULL)]++;
    }
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(lll)", counts[0], counts[1], counts[2]);
}

/* ------------------------------------------------------------------------------------ */
/* The learned evaluator (players/evalnet.py, docs/ai.md "The learned evaluator"): a     */
/* small multilayer perceptron over sparse binary features of a position as the side to  */
/* move sees it, evaluated inside the search with no Python per node.                    */
/*                                                                                        */
/* The board is turned by the half turn when North is to move (cells and alignments       */
/* through the maps given with the weights), so that one set of weights serves both sides */
/* and the side to move always sees its own camp first.  Feature blocks, in order:        */
/*   towers     (cell * 4 + level) * 10 + size, and + 5 + colour, for each piece placed    */
/*   reserves   the mover's 25 pieces, then the opponent's                                */
/*   leaders    alignment * 3 + (0 the mover, 1 the opponent, 2 nobody)                    */
/*   scores     the mover's monoliths one-hot 0..n_align, then the opponent's             */
/*   last move  its piece (25), its cell (n_cells)                                        */
/*   passed     1 when the previous turn was a pass                                       */
/*   champions  (alignment * 2 + (0 mover, 1 opponent)) * 7 + the top size of that side's */
/*              strongest tower on the alignment (0: none), and slot 6 when it has 2+     */
/*              pieces: the confrontation's inputs, which a small network finds hard to   */
/*              compute from the towers alone.                                            */
/* Layers: features -> h1 (ReLU) -> h2 (ReLU) -> value (tanh, the mover's expected        */
/* result) and one logit per action (canonical action codes: the cell turned too).        */
/* The first layer is a sum of the weight rows of the active features (at most a few      */
/* hundred of ~1,400), so an evaluation costs about what a greedy playout does.           */

#define NET_MAXH 256
#define NET_MAXACT 640

typedef struct {
    int nf, h1, h2, n_act, n_cells, n_align;
    float *w1; /* nf x h1: a feature's row is contiguous */
    float *b1, *w2t /* h1 x h2: the second layer transposed, a unit's outgoing weights contiguous */, *b2, *wv,
        *wp /* n_act x h2 */, *bp;
    float bv;
    int cells[MAXC], aligns[MAXA]; /* the half turn */
} Net;

static int net_n_features(int nc, int na)
{
    return nc * 40 + 2 * N_PIECES + 3 * na + 2 * (na + 1) + N_PIECES + nc + 1 + na * 14;
}

/* The active features of P (the mover's view) under cell map cm and alignment map am. */
static int net_features(const Board *B, const Pos *P, const int *cm, const int *am, int *idx)
{
    int nc = B->n_cells, na = B->n_align, me = P->turn, them = 1 - me, n = 0;
    int o_res = nc * 40, o_lead = o_res + 2 * N_PIECES, o_score = o_lead + 3 * na;
    int o_last = o_score + 2 * (na + 1), o_lcell = o_last + N_PIECES, o_pass = o_lcell + nc, o_champ = o_pass + 1;
    for (int c = 0; c < nc; c++) {
        uint32_t x = P->code[c];
        for (int level = 0; x; level++, x >>= 5) {
            int p = (int)(x & 31) - 1, base = (cm[c] * 4 + level) * 10;
            idx[n++] = base + piece_size(p);
            idx[n++] = base + 5 + piece_colour(p);
        }
    }
    for (int p = 0; p < N_PIECES; p++) {
        if (P->reserve[me] >> p & 1) idx[n++] = o_res + p;
        if (P->reserve[them] >> p & 1) idx[n++] = o_res + N_PIECES + p;
    }
    for (int a = 0; a < na; a++) {
        int who = P->leader[a];
        idx[n++] = o_lead + am[a] * 3 + (who < 0 ? 2 : who == me ? 0 : 1);
    }
    idx[n++] = o_score + P->score[me];
    idx[n++] = o_score + na + 1 + P->score[them];
    if (P->last_cell >= 0) {
        idx[n++] = o_last + P->last_piece;
        idx[n++] = o_lcell + cm[P->last_cell];
    }
    if (P->passes) idx[n++] = o_pass;
    for (int a = 0; a < na; a++)
        for (int side = 0; side < 2; side++) {
            const int *cells = side ? B->north[a] : B->south[a];
            int m = side ? B->n_north[a] : B->n_south[a], k = 0;
            for (int i = 0; i < m; i++)
                if (P->key[cells[i]] > k) k = P->key[cells[i]];
            int base = o_champ + (am[a] * 2 + (side == me ? 0 : 1)) * 7;
            idx[n++] = base + ((k >> 9) & 7);
            if (k & TWO_OR_MORE) idx[n++] = base + 6;
        }
    return n;
}

static int identity_map[MAXC];

/* The canonical maps for P: identity for South to move, the half turn for North. */
static inline const int *net_cells(const Net *N, const Pos *P) { return P->turn ? N->cells : identity_map; }
static inline const int *net_aligns(const Net *N, const Pos *P) { return P->turn ? N->aligns : identity_map; }

/* The canonical action of move code for the side to move of P. */
static inline int net_action(const Board *B, const Net *N, const Pos *P, int code)
{
    if (code == B->pass_code || !P->turn) return code;
    return code - code % B->n_cells + N->cells[code % B->n_cells];
}

/* A dot product in eight lanes: without -ffast-math the compiler may not reorder a float sum,
   so one accumulator would leave the vector units idle. */
static inline float dotf(const float *a, const float *b, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) acc[l] += a[i + l] * b[i + l];
    float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* The second hidden layer for position P. */
static void net_hidden(const Board *B, const Net *N, const Pos *P, float *h2)
{
    int idx[NET_MAXACT], n = net_features(B, P, net_cells(N, P), net_aligns(N, P), idx);
    float h1[NET_MAXH];
    /* The two layers were three quarters of a value-only search's time (perf).  With the
       width in a local and the rows restrict, the compiler adds four or eight units at once
       (it could not prove that the stores to h1 leave N->h1 and the weights alone, and added
       one float at a time); each unit still sums its features in the same order as before. */
    const int width = N->h1;
    float *restrict acc = h1;
    memcpy(acc, N->b1, (size_t)width * sizeof(float));
    for (int i = 0; i < n; i++) {
        const float *restrict w = N->w1 + (size_t)idx[i] * width;
        int j = 0;
        for (; j + 8 <= width; j += 8)
            for (int l = 0; l < 8; l++) acc[j + l] += w[j + l];
        for (; j < width; j++) acc[j] += w[j];
    }
    /* The second layer from the units that fire: ReLU leaves about half of them at zero, and
       a unit's outgoing weights are contiguous (w2t), so each is one vector add of h2 wide. */
    const int out = N->h2;
    float *restrict sum = h2;
    memcpy(sum, N->b2, (size_t)out * sizeof(float));
    for (int j = 0; j < width; j++) {
        float a = acc[j];
        if (a <= 0.0f) continue;
        const float *restrict w = N->w2t + (size_t)j * out;
        int k = 0;
        for (; k + 8 <= out; k += 8)
            for (int l = 0; l < 8; l++) sum[k + l] += a * w[k + l];
        for (; k < out; k++) sum[k] += a * w[k];
    }
    for (int k = 0; k < out; k++) sum[k] = sum[k] > 0.0f ? sum[k] : 0.0f;
}

/* The mover's expected result in [-1, 1]. */
static inline float net_value(const Net *N, const float *h2) { return tanhf(N->bv + dotf(N->wv, h2, N->h2)); }

static inline float net_logit(const Net *N, const float *h2, int action)
{
    return N->bp[action] + dotf(N->wp + (size_t)action * N->h2, h2, N->h2);
}

/* South's winning chance (a draw is half) by the network. */
static double net_south(const Board *B, const Net *N, const Pos *P)
{
    float h2[NET_MAXH];
    net_hidden(B, N, P, h2);
    double mine = 0.5 * (1.0 + (double)net_value(N, h2));
    return P->turn ? 1.0 - mine : mine;
}

/* The Python face: Net(board, w1, b1, w2, b2, wv, bv, wp, bp, cells, aligns), weights as
   contiguous float32 arrays (players/evalnet.py builds it from an .npz file). */
typedef struct {
    PyObject_HEAD
    Net net;
    BoardObject *board;
    float *block;
} NetObject;

static PyTypeObject NetType;
static int batch_buffer(PyObject *obj, Py_buffer *v, int writable, char kind, Py_ssize_t want, const char *what);

static PyObject *Net_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *board, *arr[8], *cellseq, *alignseq;
    static char *kwlist[] = {"board", "w1", "b1", "w2", "b2", "wv", "bv", "wp", "bp", "cells", "aligns", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OOOOOOOOOO:Net", kwlist, &BoardType, &board, &arr[0], &arr[1],
                                     &arr[2], &arr[3], &arr[4], &arr[5], &arr[6], &arr[7], &cellseq, &alignseq))
        return NULL;
    const Board *B = &((BoardObject *)board)->b;
    static const char *names[8] = {"w1", "b1", "w2", "b2", "wv", "bv", "wp", "bp"};
    Py_buffer v[8];
    int got = 0;
    NetObject *self = NULL;
    for (; got < 8; got++)
        if (batch_buffer(arr[got], &v[got], 0, 'f', -1, names[got])) goto fail;
    Net N;
    memset(&N, 0, sizeof(N));
    N.n_cells = B->n_cells;
    N.n_align = B->n_align;
    N.nf = net_n_features(B->n_cells, B->n_align);
    N.n_act = B->pass_code + 1;
    N.h1 = (int)(v[1].len / 4);
    N.h2 = (int)(v[3].len / 4);
    Py_ssize_t want[8] = {(Py_ssize_t)N.nf * N.h1, N.h1, (Py_ssize_t)N.h1 * N.h2, N.h2, N.h2, 1,
                          (Py_ssize_t)N.n_act * N.h2, N.n_act};
    if (N.h1 < 1 || N.h1 > NET_MAXH || N.h2 < 1 || N.h2 > NET_MAXH) {
        PyErr_Format(PyExc_ValueError, "Net: hidden sizes %d and %d, each must be in [1, %d]", N.h1, N.h2, NET_MAXH);
        goto fail;
    }
    for (int i = 0; i < 8; i++)
        if (v[i].len / 4 != want[i]) {
            PyErr_Format(PyExc_ValueError, "Net: %s has %zd floats, expected %zd (%d features, hidden %d and %d, %d actions)",
                         names[i], v[i].len / 4, want[i], N.nf, N.h1, N.h2, N.n_act);
            goto fail;
        }
    if (int_list(cellseq, N.cells, MAXC, 0, B->n_cells, "cells") != B->n_cells ||
        int_list(alignseq, N.aligns, MAXA, 0, B->n_align, "aligns") != B->n_align) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Net: cells and aligns must map every cell and alignment");
        goto fail;
    }
    size_t total = 0;
    for (int i = 0; i < 8; i++) total += (size_t)want[i];
    self = (NetObject *)type->tp_alloc(type, 0);
    if (!self) goto fail;
    self->block = PyMem_Malloc(total * sizeof(float));
    if (!self->block) {
        PyErr_NoMemory();
        goto fail;
    }
    float *dst[8], *at = self->block;
    for (int i = 0; i < 8; i++) {
        dst[i] = at;
        memcpy(at, v[i].buf, (size_t)want[i] * sizeof(float));
        at += want[i];
    }
    /* w2 arrives as h2 x h1 (NumPy's layout); the search reads it by first-layer unit */
    const float *w2 = v[2].buf;
    for (int k = 0; k < N.h2; k++)
        for (int j = 0; j < N.h1; j++) dst[2][(size_t)j * N.h2 + k] = w2[(size_t)k * N.h1 + j];
    N.w1 = dst[0];
    N.b1 = dst[1];
    N.w2t = dst[2];
    N.b2 = dst[3];
    N.wv = dst[4];
    N.bv = dst[5][0];
    N.wp = dst[6];
    N.bp = dst[7];
    self->net = N;
    Py_INCREF(board);
    self->board = (BoardObject *)board;
    for (int i = 0; i < 8; i++) PyBuffer_Release(&v[i]);
    return (PyObject *)self;
fail:
    for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
    Py_XDECREF(self);
    return NULL;
}

static void Net_dealloc(NetObject *self)
{
    PyMem_Free(self->block);
    Py_XDECREF(self->board);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int net_state_arg(NetObject *self, PyObject *state)
{
    if (!PyObject_TypeCheck(state, &StateType)) {
        PyErr_Format(PyExc_TypeError, "expected a kernel State, not %.80s", Py_TYPE(state)->tp_name);
        return -1;
    }
    const Board *B = BRD(state);
    if (B->n_cells != self->net.n_cells || B->n_align != self->net.n_align) {
        PyErr_SetString(PyExc_ValueError, "the state's board is not the network's board");
        return -1;
    }
    return 0;
}

/* evaluate(state) -> (value, [(code, logit), ...]): the mover's expected result and the logit
   of every legal move (for tests and the Python reference forward). */
static PyObject *Net_evaluate(PyObject *op, PyObject *state)
{
    NetObject *self = (NetObject *)op;
    if (net_state_arg(self, state)) return NULL;
    const Board *B = BRD(state);
    const Pos *P = &ST(state)->pos;
    float h2[NET_MAXH];
    net_hidden(B, &self->net, P, h2);
    int codes[MAXCODES], n = gen_legal(B, P, codes);
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *t = Py_BuildValue("(id)", codes[i], (double)net_logit(&self->net, h2, net_action(B, &self->net, P, codes[i])));
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, t);
    }
    return Py_BuildValue("(dN)", (double)net_value(&self->net, h2), list);
}

static PyObject *Net_get_hidden(PyObject *op, void *Py_UNUSED(cl))
{
    const Net *N = &((NetObject *)op)->net;
    return Py_BuildValue("(ii)", N->h1, N->h2);
}

static PyMethodDef Net_methods[] = {
    {"evaluate", Net_evaluate, METH_O,
     "evaluate(state) -> (value, [(code, logit), ...]): the side to move's expected result in [-1, 1] and "
     "the policy logit of each legal move."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Net_getset[] = {
    {"hidden", Net_get_hidden, NULL, "The two hidden layers' sizes.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject NetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "jericho_game._kernel.Net",
    .tp_basicsize = sizeof(NetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A learned evaluator's weights, for mcts(net=...) (see players/evalnet.py).",
    .tp_new = Net_new,
    .tp_dealloc = (destructor)Net_dealloc,
    .tp_methods = Net_methods,
    .tp_getset = Net_getset,
};

/* net_features(state, cells, aligns) -> [feature index, ...] under the given cell and alignment maps. */
static PyObject *k_net_features(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *state, *cellseq, *alignseq;
    if (!PyArg_ParseTuple(args, "O!OO:net_features", &StateType, &state, &cellseq, &alignseq)) return NULL;
    const Board *B = BRD(state);
    int cm[MAXC], am[MAXA];
    int nc = int_list(cellseq, cm, MAXC, 0, B->n_cells, "cells");
    if (nc < 0) return NULL;
    int na = int_list(alignseq, am, MAXA, 0, B->n_align, "aligns");
    if (na < 0) return NULL;
    if (nc != B->n_cells || na != B->n_align) {
        PyErr_SetString(PyExc_ValueError, "net_features: the maps must cover every cell and alignment");
        return NULL;
    }
    int idx[NET_MAXACT], n = net_features(B, &ST(state)->pos, cm, am, idx);
    return codes_to_list(idx, n);
}


/* ------------------------------------------------------------------------------------ */
/* The exact endgame solver (issue 31; docs/ai.md, "The endgame solver").                */
/*                                                                                        */
/* Negamax alpha-beta to the end of the game on the kernel's own gen_legal/apply (so it   */
/* cannot disagree with the rules: passes, exhaustion, the seven held through a turn and  */
/* the asymmetry rule all come from apply()).  Values are exact and ranked like a         */
/* tablebase's: a win that ends d plies from the root is SV_WIN - d, a loss -(SV_WIN - d),*/
/* a draw 0; so a search maximising them plays the fastest win and the longest defence.  */
/* There is no horizon: a transposition entry stays true forever, whatever search made   */
/* it, so a table can be kept between calls (the AI's moves, the MCTS's leaves).          */

static double now_seconds(void);

#define SV_WIN 1000 /* > the longest game: 50 placements and at most one pass between two */
#define SV_INF 30000
#define SV_MAXPLY 128
#define SV_WIN2_TRIES 3 /* moves reaching seven checked for an unbreakable seven */
enum { SV_EMPTY = 0, SV_EXACT = 1, SV_LOWER = 2, SV_UPPER = 3 };

/* One transposition entry, 16 bytes; a table is buckets of two: the first slot keeps the
   entry that cost the most work, the second is always replaced.  All-zero bytes are empty. */
typedef struct {
    uint64_t key;
    int16_t value; /* relative to the entry's own position: a win SV_WIN - plies from there */
    int16_t move;  /* the best (or cutting) move, -1 none */
    uint8_t flag;  /* SV_EMPTY, SV_EXACT, SV_LOWER (value is a lower bound), SV_UPPER */
    uint8_t work;  /* log2 of the nodes searched below it: the replacement priority */
    uint16_t pad;
} SvEntry;

typedef struct {
    const Board *B;
    SvEntry *tt;
    uint64_t tt_mask; /* buckets - 1 */
    long count, max_nodes;
    double deadline;
    int abort;
    int killers[SV_MAXPLY][2];
    int history[MAXCODES];
} Sv;

/* The table's key: the engine's hash_key, except that the last placement is left out when the
   asymmetry rule cannot bite (the side to move lacks that piece, or no aligned cell holds the
   tower it was placed on), since nothing else reads it; so the two orders of one player's two
   placements meet in the table far more often. */
static inline uint64_t sv_key(const Board *B, const Pos *P)
{
    int last = B->pass_code;
    if (P->last_cell >= 0 && (P->reserve[(int)P->turn] >> P->last_piece & 1) && forbidden_copy(B, P))
        last = P->last_piece * B->n_cells + P->last_cell;
    uint64_t z = P->zhash ^ B->z_last[last] ^ B->z_pass[P->passes > 2 ? 2 : P->passes];
    return P->turn ? z ^ B->z_turn : z;
}

static inline int sv_to_tt(int v, int ply) { return v > SV_WIN / 2 ? v + ply : v < -SV_WIN / 2 ? v - ply : v; }
static inline int sv_from_tt(int v, int ply) { return v > SV_WIN / 2 ? v - ply : v < -SV_WIN / 2 ? v + ply : v; }

static inline int sv_tick(Sv *S)
{
    S->count++;
    if (S->max_nodes > 0 && S->count > S->max_nodes) S->abort = 1;
    if ((S->count & 255) == 0 && S->deadline > 0 && now_seconds() >= S->deadline) S->abort = 1;
    return S->abort;
}

static SvEntry *sv_probe(Sv *S, uint64_t h)
{
    SvEntry *b = &S->tt[(h & S->tt_mask) * 2];
    if (b[0].flag != SV_EMPTY && b[0].key == h) return &b[0];
    if (b[1].flag != SV_EMPTY && b[1].key == h) return &b[1];
    return NULL;
}

static void sv_store(Sv *S, uint64_t h, int value, int move, int flag, long work)
{
    SvEntry *b = &S->tt[(h & S->tt_mask) * 2], *e;
    int w = 0;
    while (work > 1 && w < 255) {
        work >>= 1;
        w++;
    }
    if (b[0].key == h || b[0].flag == SV_EMPTY || w >= b[0].work)
        e = &b[0];
    else
        e = &b[1];
    if (e == &b[0] && b[0].flag != SV_EMPTY && b[0].key != h) b[1] = b[0]; /* the displaced one lives on */
    e->key = h;
    e->value = (int16_t)value;
    e->move = (int16_t)move;
    e->flag = (uint8_t)flag;
    e->work = (uint8_t)w;
}

/* The value of a finished game for the side to move at `ply`. */
static inline int sv_terminal(const Pos *P, int ply)
{
    if (P->outcome == DRAW) return 0;
    return P->outcome == P->turn ? SV_WIN - ply : -(SV_WIN - ply);
}

typedef struct {
    long long score;
    int code;
    int reach; /* the move gives its player seven (and leaves no seven of the opponent's) */
} SvScored;

static int sv_scored_desc(const void *x, const void *y)
{
    const SvScored *a = x, *b = y;
    if (a->score != b->score) return a->score < b->score ? 1 : -1;
    return a->code > b->code ? 1 : a->code < b->code ? -1 : 0;
}

/* The legal moves, best first: the table's move, moves that break the opponent's seven (the
   others lose at once), moves reaching seven, then by immediate monolith margin (the kernel's
   effect(), computed once per size and cell), killers and history.  Also reports a move that
   makes seven no reply can break (*win2), the fastest win a placement can give. */
static int sv_ordered(Sv *S, Pos *P, int ply, int tt_move, int *out, int *win2)
{
    const Board *B = S->B;
    int codes[MAXCODES], n = gen_legal(B, P, codes);
    *win2 = -1;
    if (n == 1) {
        out[0] = codes[0];
        return 1;
    }
    int me = P->turn, opp = 1 - me;
    int8_t dme[5][MAXC], dopp[5][MAXC];
    memset(dme, 0x7F, sizeof(dme));
    SvScored sc[MAXCODES];
    static const int none[2] = {-1, -1};
    const int *killers = ply < SV_MAXPLY ? S->killers[ply] : none;
    for (int i = 0; i < n; i++) {
        int code = codes[i];
        long long v = S->history[code];
        sc[i].reach = 0;
        if (code != B->pass_code) {
            int s = piece_size(code / B->n_cells), c = code % B->n_cells;
            if (dme[s][c] == 0x7F) {
                int ds[2];
                effect(B, P, s, c, ds);
                dme[s][c] = (int8_t)ds[me];
                dopp[s][c] = (int8_t)ds[opp];
            }
            int mine = P->score[me] + dme[s][c], theirs = P->score[opp] + dopp[s][c];
            if (P->score[opp] >= SEVEN && theirs >= SEVEN)
                v -= 1LL << 40; /* leaves the opponent's seven standing: lost at once */
            else if (mine >= SEVEN) {
                v += 1LL << 36;
                sc[i].reach = 1;
            }
            v += (long long)(dme[s][c] - dopp[s][c]) * (1LL << 24);
        }
        if (code == tt_move)
            v += 1LL << 44;
        else if (code == killers[0] || code == killers[1])
            v += 1LL << 22;
        sc[i].score = v;
        sc[i].code = code;
    }
    qsort(sc, (size_t)n, sizeof(SvScored), sv_scored_desc);
    for (int i = 0; i < n; i++) out[i] = sc[i].code;
    /* Whether one of the best few moves reaching seven makes it unbreakable.  Only a few: each
       check costs a breaks_possible (every reply's effect), and with six monoliths a side can
       have a hundred placements reaching seven; the search finds any other such win anyway. */
    for (int i = 0, tried = 0; i < n && tried < SV_WIN2_TRIES; i++) {
        if (!sc[i].reach) continue;
        Pos child = *P;
        apply(B, &child, sc[i].code);
        tried++;
        if (child.outcome == NO_OUTCOME && child.score[me] >= SEVEN && !breaks_possible(B, &child, me)) {
            *win2 = sc[i].code;
            break;
        }
    }
    return n;
}

/* Negamax with a fail-soft window; `ply` counts from the root; *best gets the best move. */
static int sv_search(Sv *S, Pos *P, int alpha, int beta, int ply, int *best)
{
    const Board *B = S->B;
    if (P->outcome != NO_OUTCOME) return sv_terminal(P, ply);
    if (sv_tick(S)) return 0;
    long start = S->count;
    /* The game goes on for at least one more ply: nothing better or worse than ending then. */
    int hi = SV_WIN - (ply + 1);
    if (alpha < -hi) alpha = -hi;
    if (beta > hi) beta = hi;
    if (alpha >= beta) return alpha;
    uint64_t h = sv_key(B, P);
    SvEntry *e = sv_probe(S, h);
    int tt_move = -1;
    if (e) {
        int v = sv_from_tt(e->value, ply);
        tt_move = e->move;
        if (e->flag == SV_EXACT || (e->flag == SV_LOWER && v >= beta) || (e->flag == SV_UPPER && v <= alpha)) {
            if (best) *best = tt_move;
            return v;
        }
        if (e->flag == SV_LOWER && v > alpha) alpha = v;
        if (e->flag == SV_UPPER && v < beta) beta = v;
        if (alpha >= beta) {
            if (best) *best = tt_move;
            return v;
        }
    }
    int moves[MAXCODES], win2, n = sv_ordered(S, P, ply, tt_move, moves, &win2);
    if (win2 >= 0) {
        /* Seven that no reply breaks: won after the reply, and a placement cannot win sooner
           (right after it only the opponent's seven or an exhaustion could end the game). */
        int v = SV_WIN - (ply + 2);
        sv_store(S, h, sv_to_tt(v, ply), win2, SV_EXACT, S->count - start);
        if (best) *best = win2;
        return v;
    }
    int alpha0 = alpha, value = -SV_INF, move = moves[0];
    for (int i = 0; i < n; i++) {
        int code = moves[i];
        Pos child = *P;
        apply(B, &child, code);
        int v = -sv_search(S, &child, -beta, -alpha, ply + 1, NULL);
        if (S->abort) return 0;
        if (v > value) {
            value = v;
            move = code;
            if (v > alpha) {
                alpha = v;
                if (alpha >= beta) {
                    if (ply < SV_MAXPLY && S->killers[ply][0] != code) {
                        S->killers[ply][1] = S->killers[ply][0];
                        S->killers[ply][0] = code;
                    }
                    S->history[code] += 1 + n;
                    break;
                }
            }
        }
    }
    int flag = value <= alpha0 ? SV_UPPER : value >= beta ? SV_LOWER : SV_EXACT;
    sv_store(S, h, sv_to_tt(value, ply), move, flag, S->count - start);
    if (best) *best = move;
    return value;
}

/* The exact value of P at `ply` (side to move's view, SV_WIN - plies / 0 / -(SV_WIN - plies),
   plies from the root) and a best move; returns 0, or -1 when the budget ran out (nothing else
   is then meaningful).  A first pass only asks win, draw or loss (a window around 0, much
   cheaper than an open window).  With `exact`, the distance of a win or loss is then found as a
   mate search finds it: null-window tests "does the game end within d plies?" for d = 1, 2, ...,
   each cut at depth d by the distance bounds of sv_search, the first that says yes giving the
   distance; the table carries what each test proved to the next. */
static int sv_value(Sv *S, Pos *P, int ply, int exact, int *value, int *best)
{
    *best = -1;
    if (P->outcome != NO_OUTCOME) {
        *value = sv_terminal(P, ply);
        return 0;
    }
    int v = sv_search(S, P, -1, 1, ply, best);
    if (S->abort) return -1;
    if (v != 0 && exact) {
        for (int d = 1; d < SV_WIN / 2; d++) {
            int bound = SV_WIN - (ply + d), mv = -1; /* a win within d plies is >= bound */
            if (v > 0) {
                int r = sv_search(S, P, bound - 1, bound, ply, &mv);
                if (S->abort) return -1;
                if (r >= bound) { /* won within d, not within d - 1: exactly d */
                    v = bound;
                    *best = mv;
                    break;
                }
            } else {
                int r = sv_search(S, P, -bound, -bound + 1, ply, &mv);
                if (S->abort) return -1;
                if (r <= -bound) { /* lost within d plies: the previous test's move lasts longest */
                    v = -bound;
                    if (d == 1) *best = mv;
                    break;
                }
                *best = mv; /* a move that survives d plies */
            }
        }
    }
    *value = v;
    return 0;
}

static void sv_init(Sv *S, const Board *B, SvEntry *tt, int tt_bits, long max_nodes, double deadline)
{
    memset(S, 0, sizeof(*S));
    S->B = B;
    S->tt = tt;
    S->tt_mask = ((uint64_t)1 << (tt_bits - 1)) - 1;
    S->max_nodes = max_nodes;
    S->deadline = deadline;
    for (int i = 0; i < SV_MAXPLY; i++) S->killers[i][0] = S->killers[i][1] = -1;
}

/* Pieces left in both reserves: the solver is tried where this is small. */
static inline int reserve_left(const Pos *P)
{
    return __builtin_popcount(P->reserve[0]) + __builtin_popcount(P->reserve[1]);
}

/* ------------------------------------------------------------------------------------ */
/* MCTS: UCT with progressive widening and guided playouts, the whole search in C.       */
/*                                                                                        */
/* The algorithm of players/mcts.py (docs/ai.md): select by UCB1 under progressive       */
/* widening (at most 1 + widen*sqrt(N) children), expand the next untried move in the    */
/* order "reaches 7 first, then immediate margin gain, ties random", play out, back up.  */
/* A child whose mover holds 7 that no reply can break is a proven win.  A node stores   */
/* only its best UNTRIED_FIRST untried moves; a node that needs more regenerates them.   */

#define UNTRIED_FIRST 24

/* A node's children are contiguous (child_base .. child_base + n_children - 1), so UCB1 scans
   memory in order; when the block is full it moves to a block twice as large (the old slots
   become garbage, at most as many as the nodes in use). */
typedef struct {
    int32_t child_base;
    int32_t untried;   /* offset into the untried pool, -1: not built yet */
    int32_t tt;        /* the node's position in the transposition statistics (-1: none) */
    uint32_t n;
    float prior; /* the learned evaluator's probability of this move (0 without one) */
    int16_t n_untried, next_untried, n_children, child_cap;
    int16_t code;
    int8_t terminal;
    uint8_t mover : 1, truncated : 1, by_value : 1; /* bits, so that a node stays 40 bytes (UCB1 scans them) */
    double w;
} Node;

/* Transposition statistics (`transpose`): the visits and wins of every node that holds one
   position, summed, so that UCB1 can read a child's winning rate from all the simulations
   through its position, whichever move order reached it (the exploration term keeps the
   child's own count).  Entries are appended and never move (nodes keep their index); an open
   addressing table of entry numbers finds them by position key. */
typedef struct {
    uint64_t key;
    uint32_t n;
    double w;
} TTStat;

typedef struct {
    TTStat *stat;
    uint32_t *slot; /* entry + 1, 0: empty */
    size_t n_stat, cap_stat, cap_slot;
} TTable;

typedef struct {
    Node *nodes;
    /* Beside each node (same index, so a node stays 40 bytes): the minimax of the learned
       value over the node's subtree, as the share of its mover (as `w / n` is), for implicit
       minimax backups; kept only while `imb` > 0 (NULL otherwise). */
    float *mm;
    size_t n_nodes, cap_nodes, created;
    int16_t *pool;
    float *prior_pool; /* the untried moves' priors, beside `pool` */
    size_t n_pool, cap_pool;
    uint64_t rng;
    double c, widen;
    int k, defend, solver;
    /* The learned evaluator (NULL: none): priors order the untried moves and add a PUCT term
       `cprior * prior * sqrt(N) / (1 + n)` to UCB1 (cprior 0: no priors at all, the search's
       own order); a leaf's value is `mix` times the network's and 1 - mix times a playout's
       (mix 1: no playout).  With `net_pieces` > 0 a leaf with at most that many pieces left in
       the reserves gets a playout alone: late in the game a greedy playout is nearly exact and
       the network is at its worst (docs/ai.md, "The value at scale"). */
    const Net *net;
    double mix, cprior;
    int net_pieces;
    /* Truncated playouts (`trunc` > 0, with a net): a leaf's playout stops after `trunc` plies
       and the network judges the position it reached, in place of the game's result.  Tried
       for the simulations it saves, it loses: a playout is worth its unbiased end, which a
       cut one hands back to the network (docs/ai.md, "Truncated playouts"). */
    int trunc;
    /* Value ordering (`vorder` > 0, with a net): once a node has `vorder` visits, the moves it
       has not yet widened to are ordered again by the network's value of the position each
       leads to (moves that reach seven still first).  The search's own order ranks moves by
       what they gain at once, ties at random, so among the many quiet moves widening meets
       them by chance; a node visited that often is worth one evaluation per move. */
    int vorder;
    /* Implicit minimax backups (Lanctot, Winands, Pepels and Sturtevant 2014), with a learned
       evaluator: each node also keeps the minimax of the network's value over its subtree
       (`mm`), and UCB1 ranks a child by `(1 - imb) * w / n + imb * mm`.  A value's error is
       the same at every visit, so the mean of values under a node blurs the one line that
       decides it; the minimax keeps it.  0: the plain mean. */
    double imb;
    int transpose;
    TTable tt;
    /* The endgame solver at new leaves (`solve_nodes` > 0): a leaf with at most `solve_pieces`
       pieces left in the reserves is solved (win/draw/loss) within `solve_nodes` nodes, and a
       solved leaf is a proof like a finished game.  Its table lives as long as the tree.
       With `solve_after` > 0 a node is tried once, when the search comes back to it with that
       many visits, not when it is made: most leaves are never visited again, and a solve costs
       up to `solve_nodes` playouts' time, so only the nodes the search keeps choosing pay it. */
    long solve_nodes;
    int solve_pieces, solve_after;
    Sv *sv;
    SvEntry *sv_tt;
    long solve_tries, solve_proofs;
} Tree;

/* Reserve `count` consecutive node slots; returns the first index, -1 on no memory. */
static int tree_alloc(Tree *T, size_t count)
{
    if (T->n_nodes + count > T->cap_nodes) {
        size_t cap = T->cap_nodes ? T->cap_nodes * 2 : 4096;
        while (cap < T->n_nodes + count) cap *= 2;
        if (cap > INT32_MAX) return -1;
        Node *nn = realloc(T->nodes, cap * sizeof(Node));
        if (!nn) return -1;
        T->nodes = nn;
        if (T->imb > 0.0) {
            float *nm = realloc(T->mm, cap * sizeof(float));
            if (!nm) return -1; /* T->nodes is larger and still right; cap_nodes unchanged */
            T->mm = nm;
        }
        T->cap_nodes = cap;
    }
    size_t base = T->n_nodes;
    T->n_nodes += count;
    return (int)base;
}

static void node_init(Tree *T, Node *x, int code, int mover, int terminal)
{
    memset(x, 0, sizeof(*x));
    x->child_base = -1;
    x->untried = -1;
    x->code = (int16_t)code;
    x->mover = (uint8_t)(mover & 1);
    x->terminal = (int8_t)terminal;
    x->tt = -1;
    T->created++;
}

/* The entry of position `key` in the transposition statistics (made when new); -1 on no memory. */
static int tt_entry(TTable *tt, uint64_t key)
{
    if ((tt->n_stat + 1) * 10 > tt->cap_slot * 7) { /* keep the table at most 70% full */
        size_t cap = tt->cap_slot ? tt->cap_slot * 2 : 1 << 16;
        if (cap > ((size_t)1 << 31)) return -1;
        uint32_t *ns = calloc(cap, sizeof(uint32_t));
        if (!ns) return -1;
        for (size_t e = 0; e < tt->n_stat; e++) {
            size_t h = (size_t)(tt->stat[e].key * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
            while (ns[h]) h = (h + 1) & (cap - 1);
            ns[h] = (uint32_t)(e + 1);
        }
        free(tt->slot);
        tt->slot = ns;
        tt->cap_slot = cap;
    }
    size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (tt->cap_slot - 1);
    for (; tt->slot[h]; h = (h + 1) & (tt->cap_slot - 1))
        if (tt->stat[tt->slot[h] - 1].key == key) return (int)(tt->slot[h] - 1);
    if (tt->n_stat == tt->cap_stat) {
        size_t cap = tt->cap_stat ? tt->cap_stat * 2 : 1 << 15;
        TTStat *st = realloc(tt->stat, cap * sizeof(TTStat));
        if (!st) return -1;
        tt->stat = st;
        tt->cap_stat = cap;
    }
    TTStat *e = &tt->stat[tt->n_stat];
    e->key = key;
    e->n = 0;
    e->w = 0.0;
    tt->slot[h] = (uint32_t)(tt->n_stat + 1);
    return (int)tt->n_stat++;
}

/* A new child of node ni (its block grows when full); returns its index, -1 on no memory. */
static int tree_child(Tree *T, int ni, int code, int mover, int terminal)
{
    Node *x = &T->nodes[ni];
    if (x->n_children == x->child_cap) {
        int cap = x->child_cap ? 2 * x->child_cap : 2;
        int base = tree_alloc(T, (size_t)cap);
        if (base < 0) return -1;
        x = &T->nodes[ni];
        if (x->n_children) {
            memcpy(&T->nodes[base], &T->nodes[x->child_base], (size_t)x->n_children * sizeof(Node));
            if (T->mm) memcpy(&T->mm[base], &T->mm[x->child_base], (size_t)x->n_children * sizeof(float));
        }
        x->child_base = base;
        x->child_cap = (int16_t)cap;
    }
    int ch = x->child_base + x->n_children++;
    node_init(T, &T->nodes[ch], code, mover, terminal);
    if (T->mm) T->mm[ch] = 0.5f;
    return ch;
}

/* Room for `keep` more untried moves (and their priors); -1 on no memory. */
static int pool_reserve(Tree *T, size_t keep)
{
    if (T->n_pool + keep <= T->cap_pool) return 0;
    size_t cap = T->cap_pool ? T->cap_pool * 2 : 65536;
    while (cap < T->n_pool + keep) cap *= 2;
    int16_t *np = realloc(T->pool, cap * sizeof(int16_t));
    if (!np) return -1;
    T->pool = np;
    float *pp = realloc(T->prior_pool, cap * sizeof(float));
    if (!pp) return -1;
    T->prior_pool = pp;
    T->cap_pool = cap;
    return 0;
}

static int by_key_desc(const void *x, const void *y)
{
    float a = ((const float *)x)[0], b = ((const float *)y)[0];
    return a < b ? 1 : a > b ? -1 : 0;
}

/* The untried moves ordered by the learned evaluator: the moves that reach seven first (exact
   tactics stay exact), then by the network's prior; each move's prior stored beside it. */
static int net_untried(Tree *T, const Board *B, const Pos *P, int ni, int skip_children, const int *codes,
                       const int *first, int n)
{
    const Net *N = T->net;
    float h2[NET_MAXH], logit[MAXCODES], top = -1e30f;
    net_hidden(B, N, P, h2);
    for (int i = 0; i < n; i++) {
        logit[i] = net_logit(N, h2, net_action(B, N, P, codes[i]));
        if (logit[i] > top) top = logit[i];
    }
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += exp((double)(logit[i] - top));
    int keep = n;
    if (!skip_children && keep > UNTRIED_FIRST) keep = UNTRIED_FIRST;
    /* (key, index) pairs: the best `keep` by insertion (most moves fail the first comparison),
       or a sort when all are kept (a regenerated node). */
    float best[MAXCODES][2];
    int m = 0;
    for (int i = 0; i < n; i++) {
        float key = logit[i] + (first[i] ? 1e30f : 0.0f);
        if (keep == n) {
            best[m][0] = key;
            best[m++][1] = (float)i;
            continue;
        }
        if (m == keep && key <= best[m - 1][0]) continue;
        int j = m < keep ? m++ : m - 1;
        while (j > 0 && best[j - 1][0] < key) {
            best[j][0] = best[j - 1][0];
            best[j][1] = best[j - 1][1];
            j--;
        }
        best[j][0] = key;
        best[j][1] = (float)i;
    }
    if (keep == n) qsort(best, (size_t)n, sizeof(best[0]), by_key_desc);
    if (pool_reserve(T, (size_t)keep)) return -1;
    Node *x = &T->nodes[ni];
    for (int j = 0; j < keep; j++) {
        int i = (int)best[j][1];
        T->pool[T->n_pool + (size_t)j] = (int16_t)codes[i];
        T->prior_pool[T->n_pool + (size_t)j] = (float)(exp((double)(logit[i] - top)) / sum);
    }
    x->untried = (int32_t)T->n_pool;
    x->n_untried = (int16_t)keep;
    x->next_untried = 0;
    x->truncated = keep < n;
    T->n_pool += (size_t)keep;
    return 0;
}

/* The untried moves of node ni ordered by the network's value of each move's position for
   the mover (a finished game by its result); `first` ones (reaching seven) lead.  All are kept. */
static int value_untried(Tree *T, const Board *B, const Pos *P, int ni, const int *codes, const int *first, int n)
{
    float best[MAXCODES][2];
    int mover = P->turn;
    for (int i = 0; i < n; i++) {
        Pos Q = *P;
        apply(B, &Q, codes[i]);
        double south = Q.outcome == NO_OUTCOME ? net_south(B, T->net, &Q)
                       : Q.outcome == DRAW     ? 0.5
                       : Q.outcome == 0        ? 1.0
                                               : 0.0;
        best[i][0] = (float)(mover == 0 ? south : 1.0 - south) + (first[i] ? 2.0f : 0.0f);
        best[i][1] = (float)i;
    }
    qsort(best, (size_t)n, sizeof(best[0]), by_key_desc);
    if (pool_reserve(T, (size_t)(n ? n : 1))) return -1;
    Node *x = &T->nodes[ni];
    for (int j = 0; j < n; j++) {
        T->pool[T->n_pool + (size_t)j] = (int16_t)codes[(int)best[j][1]];
        T->prior_pool[T->n_pool + (size_t)j] = 0.0f;
    }
    x->untried = (int32_t)T->n_pool;
    x->n_untried = (int16_t)n;
    x->next_untried = 0;
    x->truncated = 0;
    T->n_pool += (size_t)n;
    return 0;
}

/* Ordered untried moves of P into the pool for node `ni` (best first); -1 on no memory.
   `skip_children`: all of them but its children, else the best UNTRIED_FIRST; `by_value`: all of
   them ordered by the network's value (value_untried). */
static int build_untried(Tree *T, const Board *B, Pos *P, int ni, int skip_children, int by_value)
{
    int codes[MAXCODES], n = gen_legal(B, P, codes);
    int me = P->turn, opp = 1 - me;
    int8_t eff_me[5][MAXC], eff_opp[5][MAXC];
    memset(eff_me, 0x7F, sizeof(eff_me));
    memset(eff_opp, 0, sizeof(eff_opp));
    int dme[MAXCODES], dopp[MAXCODES];
    for (int i = 0; i < n; i++) {
        if (codes[i] == B->pass_code) {
            dme[i] = dopp[i] = 0;
            continue;
        }
        int s = piece_size(codes[i] / B->n_cells), c = codes[i] % B->n_cells;
        if (eff_me[s][c] == 0x7F) {
            int ds[2];
            effect(B, P, s, c, ds);
            eff_me[s][c] = (int8_t)ds[me];
            eff_opp[s][c] = (int8_t)ds[opp];
        }
        dme[i] = eff_me[s][c];
        dopp[i] = eff_opp[s][c];
    }
    /* Facing the opponent's 7: only the moves that break it (the others lose at once). */
    if (P->score[opp] >= SEVEN) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (P->score[opp] + dopp[i] < SEVEN) m++;
        if (m) {
            int j = 0;
            for (int i = 0; i < n; i++)
                if (P->score[opp] + dopp[i] < SEVEN) {
                    codes[j] = codes[i];
                    dme[j] = dme[i];
                    dopp[j++] = dopp[i];
                }
            n = j;
        }
    }
    if (skip_children) { /* regenerating: drop the moves already expanded */
        int j = 0;
        for (int i = 0; i < n; i++) {
            int dup = 0;
            const Node *x = &T->nodes[ni];
            for (int ch = 0; ch < x->n_children; ch++)
                if (T->nodes[x->child_base + ch].code == codes[i]) {
                    dup = 1;
                    break;
                }
            if (!dup) {
                codes[j] = codes[i];
                dme[j] = dme[i];
                dopp[j++] = dopp[i];
            }
        }
        n = j;
    }
    /* Group the moves by priority (counting sort), best group first; within a group the order
       is random (a partial Fisher-Yates draws only the moves kept, not all ~650). */
    enum { NB = 18 };
    int count[NB] = {0}, start[NB], bucket[MAXCODES], grouped[MAXCODES];
    for (int i = 0; i < n; i++) {
        int d = dme[i] - dopp[i], b;
        if (P->score[me] >= SEVEN - 2 && d > 0 && P->score[me] + dme[i] >= SEVEN)
            b = NB - 1; /* reaches seven */
        else
            b = d < -8 ? 0 : d > 8 ? NB - 2 : d + 8;
        bucket[i] = b;
        count[b]++;
    }
    if (by_value) {
        for (int i = 0; i < n; i++) bucket[i] = bucket[i] == NB - 1;
        return value_untried(T, B, P, ni, codes, bucket, n);
    }
    /* cprior 0: the network gives the value only, and the moves keep the search's own order
       (a weak policy ordering the widening costs more than the value gains: docs/ai.md). */
    if (T->net && T->cprior > 0.0) {
        for (int i = 0; i < n; i++) bucket[i] = bucket[i] == NB - 1;
        return net_untried(T, B, P, ni, skip_children, codes, bucket, n);
    }
    for (int b = NB - 1, at = 0; b >= 0; b--) {
        start[b] = at;
        at += count[b];
    }
    for (int i = 0; i < n; i++) grouped[start[bucket[i]]++] = codes[i];
    int keep = n;
    if (!skip_children && keep > UNTRIED_FIRST) keep = UNTRIED_FIRST;
    if (pool_reserve(T, (size_t)keep)) return -1;
    Node *x = &T->nodes[ni];
    int16_t *out = T->pool + T->n_pool;
    int w = 0;
    for (int b = NB - 1, lo = 0; b >= 0 && w < keep; b--) {
        int m = count[b], *g = grouped + lo;
        lo += m;
        for (int j = 0; j < m && w < keep; j++) {
            int r = j + (int)below_n((uint32_t)(rnext(&T->rng) >> 32), (uint32_t)(m - j));
            int t = g[j];
            g[j] = g[r];
            g[r] = t;
            T->prior_pool[T->n_pool + (size_t)w] = 0.0f;
            out[w++] = (int16_t)g[j];
        }
    }
    x->untried = (int32_t)T->n_pool;
    x->n_untried = (int16_t)w;
    x->next_untried = 0;
    x->truncated = w < n;
    T->n_pool += (size_t)w;
    return 0;
}

/* 1/n and 1/sqrt(n) for small visit counts: UCB1 over hundreds of root children is the
   hottest loop of the search, and a division plus a square root per child dominated it. */
#define RECIP_N 16384
static double recip[RECIP_N], rsqrt[RECIP_N];

static void recip_init(void)
{
    for (int i = 1; i < RECIP_N; i++) {
        recip[i] = 1.0 / i;
        rsqrt[i] = 1.0 / sqrt((double)i);
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether node x has no move left to expand (every legal move is a child). */
static inline int fully_expanded(const Node *x)
{
    return x->untried >= 0 && x->next_untried == x->n_untried && !x->truncated;
}

/* MCTS-solver (Winands, Bjornsson and Saito 2008): proofs travel up the path just searched.  A
   node's `terminal` is its proven winner.  A node where the side to move has a child proven won
   for it is won for that side; a fully expanded node whose children are all proven won for the
   other side is lost.  Proven nodes are never searched again (the selection stops at them and
   skips proven losses), and a proven root ends the search. */
static void solve_path(Tree *T, const int *path, int depth)
{
    for (int i = depth - 1; i > 0; i--) {
        const Node *y = &T->nodes[path[i]];
        Node *x = &T->nodes[path[i - 1]];
        int tomove = 1 - x->mover;
        if (y->terminal == NO_OUTCOME || x->terminal != NO_OUTCOME) return;
        if (y->terminal == tomove) {
            x->terminal = (int8_t)tomove;
            continue;
        }
        if (!fully_expanded(x)) return;
        /* Every move proven (the endgame solver proves draws too): the best of them for the
           side to move, a draw if one holds, else lost. */
        const Node *kids = &T->nodes[x->child_base];
        int drawn = 0;
        for (int ch = 0; ch < x->n_children; ch++) {
            if (kids[ch].terminal == NO_OUTCOME || kids[ch].terminal == tomove) return;
            drawn |= kids[ch].terminal == DRAW;
        }
        x->terminal = (int8_t)(drawn ? DRAW : x->mover);
    }
}

#define SV_TREE_BITS 16 /* the tree's solver table: 2^16 entries, 1 MB */

/* The winner of P (0, 1 or DRAW) if the solver settles it within the tree's budget, else
   NO_OUTCOME.  Only win/draw/loss is asked: a proof in the tree needs no distance. */
static int tree_solve(Tree *T, const Board *B, Pos *P, double deadline)
{
    if (!T->sv) {
        T->sv = malloc(sizeof(Sv));
        T->sv_tt = calloc((size_t)1 << SV_TREE_BITS, sizeof(SvEntry));
        if (!T->sv || !T->sv_tt) { /* no memory: search on without the solver */
            free(T->sv);
            free(T->sv_tt);
            T->sv = NULL;
            T->sv_tt = NULL;
            T->solve_nodes = 0;
            return NO_OUTCOME;
        }
        sv_init(T->sv, B, T->sv_tt, SV_TREE_BITS, 0, 0.0);
    }
    Sv *S = T->sv;
    S->B = B;
    S->count = 0;
    S->abort = 0;
    S->max_nodes = T->solve_nodes;
    S->deadline = deadline;
    T->solve_tries++;
    int v, mv;
    if (sv_value(S, P, 0, 0, &v, &mv)) return NO_OUTCOME;
    T->solve_proofs++;
    return v > 0 ? P->turn : v < 0 ? 1 - P->turn : DRAW;
}

/* The share of node y's mover in y's minimax: exact when proven, else its backed-up value. */
static inline float mm_of(const Tree *T, const Node *y, int yi)
{
    if (y->terminal != NO_OUTCOME) return y->terminal == DRAW ? 0.5f : y->terminal == y->mover ? 1.0f : 0.0f;
    return T->mm[yi];
}

/* Implicit minimax backups: the leaf at the end of `path` holds `leaf` (its mover's share by
   the network, or its exact or played-out result where the network does not judge it: a proof,
   a finished game, a leaf under `net_pieces`); each node above takes the best of its children for the side
   to move there (every child of a node has been evaluated once: children are made one at a
   time and evaluated at once). */
static void mm_backup(Tree *T, const int *path, int depth, float leaf)
{
    T->mm[path[depth - 1]] = leaf;
    for (int i = depth - 2; i >= 0; i--) {
        const Node *x = &T->nodes[path[i]];
        float best = 0.0f;
        for (int ch = 0; ch < x->n_children; ch++) {
            int yi = x->child_base + ch;
            float v = mm_of(T, &T->nodes[yi], yi);
            if (v > best) best = v;
        }
        T->mm[path[i]] = 1.0f - best; /* the share of x's mover: the other side chooses below x */
    }
}

/* Run simulations from root position R; returns the number done, -1 on no memory. */
static long mcts_run(Tree *T, const Board *B, const Pos *R, long sims, double deadline)
{
    int path[256];
    long done = 0;
    for (;;) {
        if (sims > 0 && done >= sims) break;
        /* The clock every simulation: a greedy playout costs ~50-800 us, and reading the clock
           (a vDSO call, tens of ns) every 16 of them could overrun a 0.2 s limit by 5%. */
        if (deadline > 0 && T->nodes[0].n_children && now_seconds() >= deadline) break;
        Pos P = *R;
        int ni = 0, depth = 0;
        path[depth++] = 0;
        int force = 0; /* expand although widening says no: every child is a proven loss */
        while (T->nodes[ni].terminal == NO_OUTCOME) {
            Node *x = &T->nodes[ni];
            if (x->untried < 0) {
                if (x->n == 0 && ni != 0) break; /* a fresh leaf: play out from here */
                if (build_untried(T, B, &P, ni, 0, 0)) return -1;
                x = &T->nodes[ni];
            }
            if (T->vorder && !x->by_value && x->n >= (uint32_t)T->vorder &&
                (x->next_untried < x->n_untried || x->truncated)) {
                x->by_value = 1; /* once: the moves left, ordered by the network */
                if (build_untried(T, B, &P, ni, 1, 1)) return -1;
                x = &T->nodes[ni];
            }
            int limit = force ? x->n_children + 1 : 1 + (int)(T->widen * sqrt((double)x->n + 1.0));
            force = 0;
            if (x->next_untried == x->n_untried && x->truncated && x->n_children < limit) {
                if (build_untried(T, B, &P, ni, 1, 0)) return -1;
                x = &T->nodes[ni];
            }
            if (x->next_untried < x->n_untried && x->n_children < limit) {
                float prior = T->prior_pool[x->untried + x->next_untried];
                int code = T->pool[x->untried + x->next_untried++];
                int mover = P.turn;
                apply(B, &P, code);
                int outcome = P.outcome;
                if (outcome == NO_OUTCOME && P.score[mover] >= SEVEN && !breaks_possible(B, &P, mover))
                    outcome = mover; /* proven: seven monoliths that no reply breaks */
                if (outcome == NO_OUTCOME && T->solve_nodes > 0 && !T->solve_after && reserve_left(&P) <= T->solve_pieces)
                    outcome = tree_solve(T, B, &P, deadline); /* proven by the endgame solver */
                int ch = tree_child(T, ni, code, mover, outcome);
                if (ch < 0) return -1;
                T->nodes[ch].prior = prior;
                if (T->transpose && (T->nodes[ch].tt = tt_entry(&T->tt, hash_key(B, &P))) < 0) return -1;
                ni = ch;
                path[depth++] = ni;
                break;
            }
            /* UCB1 among the existing children (with the solver, never a proven loss for the mover
               while another child is open: every simulation through it would be wasted). */
            double cs = T->c * sqrt(log((double)x->n + 1.0)), best_v = -1.0;
            double cp = T->net ? T->cprior * sqrt((double)x->n) : 0.0;
            int best = -1, lost = T->solver ? x->mover : -2;
            const Node *kids = &T->nodes[x->child_base];
            for (int ch = 0; ch < x->n_children; ch++) {
                const Node *y = &kids[ch];
                double v, q;
                if (y->terminal == lost)
                    v = -0.5;
                else if (!y->n)
                    v = 1e9;
                else {
                    if (y->tt >= 0 && T->tt.stat[y->tt].n > y->n) { /* more simulations through its position */
                        q = T->tt.stat[y->tt].w / T->tt.stat[y->tt].n;
                        v = cs / sqrt((double)y->n);
                    } else if (y->n < RECIP_N) {
                        q = y->w * recip[y->n];
                        v = cs * rsqrt[y->n];
                    } else {
                        q = y->w / y->n;
                        v = cs / sqrt((double)y->n);
                    }
                    if (T->mm) q += T->imb * ((double)mm_of(T, y, x->child_base + ch) - q);
                    v += q; /* the same sum as before in either order: the plain search is unchanged */
                }
                if (cp > 0.0 && y->n && y->terminal != lost) v += cp * y->prior / (1.0 + y->n);
                if (v > best_v) {
                    best_v = v;
                    best = x->child_base + ch;
                }
            }
            if (best < 0) break; /* cannot happen: a live node has a move */
            if (best_v < 0 && (x->next_untried < x->n_untried || x->truncated)) {
                force = 1; /* only proven losses so far: try another move of this node */
                continue;
            }
            apply(B, &P, T->nodes[best].code);
            ni = best;
            if (depth < 255) path[depth++] = ni;
            Node *y = &T->nodes[ni];
            if (T->solve_after && y->n == (uint32_t)T->solve_after && y->terminal == NO_OUTCOME && T->solve_nodes > 0 &&
                reserve_left(&P) <= T->solve_pieces)
                y->terminal = tree_solve(T, B, &P, deadline); /* a revisited node, proven or left open */
        }
        /* South's share of the result: exact at a decided node, else a playout's, the
           network's, or the two mixed. */
        double south, heuristic = -1.0; /* the network's value of the leaf for South (-1: none) */
        int result = T->nodes[ni].terminal;
        if (result == NO_OUTCOME) {
            int judged = T->net && reserve_left(&P) > T->net_pieces;
            double mix = judged ? T->mix : 0.0;
            double by_net = mix > 0.0 ? net_south(B, T->net, &P) : 0.0;
            heuristic = mix > 0.0 ? by_net : -1.0;
            if (mix < 1.0) {
                result = playout_upto(B, &P, &T->rng, T->k, T->defend, NULL, NULL, judged ? T->trunc : 0);
                if (result == NO_OUTCOME)
                    south = net_south(B, T->net, &P); /* cut short: the network judges where it stopped */
                else
                    south = result == DRAW ? 0.5 : result == 0 ? 1.0 : 0.0;
                if (mix > 0.0) south = mix * by_net + (1.0 - mix) * south;
            } else
                south = by_net;
        } else
            south = result == DRAW ? 0.5 : result == 0 ? 1.0 : 0.0;
        if (T->solver) solve_path(T, path, depth);
        if (T->mm) {
            /* the minimax is of the network's value, never of a playout mixed into it (one
               playout's result is noise); a leaf the network does not judge brings its result */
            double h = heuristic >= 0.0 ? heuristic : south;
            mm_backup(T, path, depth, (float)(T->nodes[ni].mover == 0 ? h : 1.0 - h));
        }
        for (int i = 0; i < depth; i++) {
            Node *x = &T->nodes[path[i]];
            double won = x->mover == 0 ? south : 1.0 - south;
            x->n++;
            x->w += won;
            if (x->tt >= 0) {
                T->tt.stat[x->tt].n++;
                T->tt.stat[x->tt].w += won;
            }
        }
        done++;
        if (T->solver && T->nodes[0].terminal != NO_OUTCOME) break; /* the root is proven */
    }
    return done;
}

/* A search tree kept between calls (the Python player's `reuse`): a later search of the same
   position continues it, with its own random generator, so a search cut in slices plays
   exactly the move of one uncut search.  With `reroot`, a search of a position the tree
   already holds one or two plies below its root (the player's own move, then the reply)
   starts from that subtree instead of an empty tree. */
typedef struct {
    PyObject_HEAD
    Tree T;
    uint64_t root_hash;
    Pos root; /* the position of the tree's root (re-rooting finds its descendants from it) */
    int used, busy;
} TreeObject;

static void tree_free(Tree *T)
{
    free(T->mm);
    free(T->sv);
    free(T->sv_tt);
    free(T->nodes);
    free(T->pool);
    free(T->prior_pool);
    free(T->tt.stat);
    free(T->tt.slot);
    memset(T, 0, sizeof(*T));
}

/* The node one or two plies below the root whose position has hash `want` (-1: none). */
static int tree_find(const Tree *T, const Board *B, const Pos *root, uint64_t want)
{
    const Node *r = &T->nodes[0];
    for (int i = 0; i < r->n_children; i++) {
        int ci = r->child_base + i;
        const Node *y = &T->nodes[ci];
        Pos P = *root;
        apply(B, &P, y->code);
        if (hash_key(B, &P) == want) return ci;
        if (P.outcome != NO_OUTCOME) continue;
        for (int j = 0; j < y->n_children; j++) {
            int gi = y->child_base + j;
            Pos Q = P;
            apply(B, &Q, T->nodes[gi].code);
            if (hash_key(B, &Q) == want) return gi;
        }
    }
    return -1;
}

/* Replace T by the subtree under node `keep`, copied breadth first into fresh arrays (so the
   memory of the rest of the tree is given back, and the tree cannot grow move after move).
   Returns 0, or -1 on no memory (T is then unchanged). */
static int tree_reroot(Tree *T, int keep)
{
    Tree S = *T;
    S.nodes = NULL;
    S.mm = NULL; /* made by tree_alloc when T keeps one */
    S.pool = NULL;
    S.prior_pool = NULL;
    memset(&S.tt, 0, sizeof(S.tt)); /* taken over from T once the copy is made */
    S.sv = NULL; /* so is the solver's table */
    S.sv_tt = NULL;
    S.n_nodes = S.cap_nodes = S.created = S.n_pool = S.cap_pool = 0;
    /* Old index of each new node, the queue of the copy: a subtree has no more nodes than T. */
    int32_t *from = malloc(T->n_nodes * sizeof(int32_t));
    if (!from || tree_alloc(&S, 1) < 0) goto fail;
    S.nodes[0] = T->nodes[keep];
    if (S.mm) S.mm[0] = T->mm[keep];
    from[0] = keep;
    for (size_t at = 0; at < S.n_nodes; at++) {
        const Node *o = &T->nodes[from[at]];
        if (o->n_children) {
            int base = tree_alloc(&S, (size_t)o->n_children);
            if (base < 0) goto fail;
            memcpy(&S.nodes[base], &T->nodes[o->child_base], (size_t)o->n_children * sizeof(Node));
            if (S.mm) memcpy(&S.mm[base], &T->mm[o->child_base], (size_t)o->n_children * sizeof(float));
            S.nodes[at].child_base = base;
            S.nodes[at].child_cap = o->n_children;
            for (int ch = 0; ch < o->n_children; ch++) from[base + ch] = o->child_base + ch;
        }
        /* Only the moves not yet expanded travel (the expanded ones are children now). */
        if (o->untried >= 0) {
            size_t left = (size_t)(o->n_untried - o->next_untried);
            if (pool_reserve(&S, left ? left : 1)) goto fail;
            memcpy(S.pool + S.n_pool, T->pool + o->untried + o->next_untried, left * sizeof(int16_t));
            memcpy(S.prior_pool + S.n_pool, T->prior_pool + o->untried + o->next_untried, left * sizeof(float));
            S.nodes[at].untried = (int32_t)S.n_pool;
            S.nodes[at].n_untried = (int16_t)left;
            S.nodes[at].next_untried = 0;
            S.n_pool += left;
        }
    }
    free(from);
    S.nodes[0].code = -1;
    S.created = S.n_nodes; /* the garbage of grown child blocks is not copied */
    S.tt = T->tt; /* statistics of positions: still true below the new root */
    memset(&T->tt, 0, sizeof(T->tt));
    S.sv = T->sv; /* solved positions stay solved */
    S.sv_tt = T->sv_tt;
    T->sv = NULL;
    T->sv_tt = NULL;
    tree_free(T);
    *T = S;
    return 0;
fail:
    free(from);
    tree_free(&S);
    return -1;
}

static PyObject *TreeObj_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":Tree", kwlist)) return NULL;
    return type->tp_alloc(type, 0);
}

static void TreeObj_dealloc(TreeObject *self)
{
    tree_free(&self->T);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *TreeObj_clear(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    TreeObject *t = (TreeObject *)self;
    if (t->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the tree is being searched");
        return NULL;
    }
    tree_free(&t->T);
    t->used = 0;
    Py_RETURN_NONE;
}

static PyObject *TreeObj_get_simulations(PyObject *self, void *Py_UNUSED(cl))
{
    TreeObject *t = (TreeObject *)self;
    return PyLong_FromUnsignedLong(t->used ? t->T.nodes[0].n : 0);
}

static PyObject *TreeObj_get_nodes(PyObject *self, void *Py_UNUSED(cl))
{
    return PyLong_FromSize_t(((TreeObject *)self)->T.created);
}

static PyObject *TreeObj_get_solver(PyObject *self, void *Py_UNUSED(cl))
{
    const Tree *T = &((TreeObject *)self)->T;
    return Py_BuildValue("(ll)", T->solve_tries, T->solve_proofs);
}

static PyObject *TreeObj_get_positions(PyObject *self, void *Py_UNUSED(cl))
{
    return PyLong_FromSize_t(((TreeObject *)self)->T.tt.n_stat);
}

static PyMethodDef TreeObj_methods[] = {
    {"clear", TreeObj_clear, METH_NOARGS, "Forget the tree (the next search starts a new one)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef TreeObj_getset[] = {
    {"simulations", TreeObj_get_simulations, NULL, "Simulations in the tree (its root's visits).", NULL},
    {"nodes", TreeObj_get_nodes, NULL, "Nodes in the tree.", NULL},
    {"solver", TreeObj_get_solver, NULL,
     "(leaves the endgame solver tried, leaves it proved) since the tree was made (searches with solve_nodes).",
     NULL},
    {"positions", TreeObj_get_positions, NULL,
     "Positions in the transposition statistics (searches with transpose=True; 0 otherwise).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject TreeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "jericho_game._kernel.Tree",
    .tp_basicsize = sizeof(TreeObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An MCTS tree kept between searches of one position (see mcts(tree=...)).",
    .tp_new = TreeObj_new,
    .tp_dealloc = (destructor)TreeObj_dealloc,
    .tp_methods = TreeObj_methods,
    .tp_getset = TreeObj_getset,
};

static PyObject *k_mcts(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    PyObject *state, *seedobj, *treeobj = Py_None, *netobj = Py_None;
    long sims = 0;
    double seconds = 0.0, c = 0.7, widen = 2.0, mix = 0.5, cprior = 1.0, imb = 0.0;
    int k = 3, defend = 0, solver = 0, greedy = 0, proofs = 0, reroot = 0, transpose = 0;
    static char *kwlist[] = {"state", "seed", "sims", "seconds", "c", "widen", "k", "tree", "defend", "solver",
                             "greedy", "proofs", "net", "mix", "cprior", "reroot", "transpose", "solve_nodes",
                             "solve_pieces", "solve_after", "net_pieces", "imb", "trunc", "vorder", NULL};
    long solve_nodes = 0;
    int solve_pieces = 0, solve_after = 0, net_pieces = 0, trunc = 0, vorder = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O|ldddiOppppOddppliiidii:mcts", kwlist, &StateType, &state,
                                     &seedobj, &sims, &seconds, &c, &widen, &k, &treeobj, &defend, &solver, &greedy,
                                     &proofs, &netobj, &mix, &cprior, &reroot, &transpose, &solve_nodes,
                                     &solve_pieces, &solve_after, &net_pieces, &imb, &trunc, &vorder))
        return NULL;
    if (net_pieces < 0 || trunc < 0 || vorder < 0) {
        PyErr_SetString(PyExc_ValueError, "mcts: need net_pieces >= 0, trunc >= 0 and vorder >= 0");
        return NULL;
    }
    if ((trunc > 0 || vorder > 0) && netobj == Py_None) {
        PyErr_SetString(PyExc_ValueError, "mcts: trunc (truncated playouts) and vorder (value ordering) need a net");
        return NULL;
    }
    if (solve_nodes < 0 || solve_pieces < 0 || solve_after < 0 || (solve_nodes > 0 && !solver)) {
        PyErr_SetString(PyExc_ValueError, "mcts: need solve_nodes, solve_pieces and solve_after >= 0, and solver=True "
                                          "for the endgame solver's proofs to count");
        return NULL;
    }
    const Net *net = NULL;
    if (netobj != Py_None) {
        if (!PyObject_TypeCheck(netobj, &NetType)) {
            PyErr_Format(PyExc_TypeError, "net must be a jericho_game._kernel.Net, not %.80s", Py_TYPE(netobj)->tp_name);
            return NULL;
        }
        if (net_state_arg((NetObject *)netobj, state)) return NULL;
        net = &((NetObject *)netobj)->net;
    }
    if (!(mix >= 0.0 && mix <= 1.0) || !(cprior >= 0.0) || !(imb >= 0.0 && imb <= 1.0)) {
        PyErr_SetString(PyExc_ValueError, "mcts: need mix in [0, 1], cprior >= 0 and imb in [0, 1]");
        return NULL;
    }
    if (imb > 0.0 && !net) {
        PyErr_SetString(PyExc_ValueError, "mcts: imb (implicit minimax backups) needs a net: its value is what is backed up");
        return NULL;
    }
    uint64_t seed;
    if (seed_arg(seedobj, &seed)) return NULL;
    if (sims < 0 || seconds < 0 || (sims == 0 && seconds == 0) || k < 1 || k > 1000 || !(c >= 0) || !(widen > 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "mcts: need sims > 0 and/or seconds > 0, k in [1, 1000], c >= 0 and widen > 0");
        return NULL;
    }
    TreeObject *tobj = NULL;
    if (treeobj != Py_None) {
        if (!PyObject_TypeCheck(treeobj, &TreeType)) {
            PyErr_Format(PyExc_TypeError, "tree must be a jericho_game._kernel.Tree, not %.80s",
                         Py_TYPE(treeobj)->tp_name);
            return NULL;
        }
        tobj = (TreeObject *)treeobj;
        if (tobj->busy) {
            PyErr_SetString(PyExc_RuntimeError, "mcts: the tree is being searched by another call");
            return NULL;
        }
    }
    const Board *B = BRD(state);
    Pos R = ST(state)->pos;
    if (R.outcome != NO_OUTCOME) {
        PyErr_SetString(PyExc_ValueError, "mcts: the game is over, there is nothing to search");
        return NULL;
    }
    Tree local, *T = tobj ? &tobj->T : &local;
    uint64_t h = hash_key(B, &R);
    double t0 = now_seconds(), elapsed; /* re-rooting is part of the search's time */
    int fresh = !tobj || !tobj->used || tobj->root_hash != h;
    if (fresh && tobj && tobj->used && reroot) {
        int keep = tree_find(T, B, &tobj->root, h);
        if (keep > 0 && T->nodes[keep].n_children > 0 && tree_reroot(T, keep) == 0) {
            fresh = 0;
            T->rng = seed; /* a new search: its own random numbers, as a fresh tree has */
        }
    }
    if (fresh) {
        if (tobj) tree_free(T);
        memset(T, 0, sizeof(*T));
        T->rng = seed;
    }
    T->c = c;
    T->widen = widen;
    T->k = greedy ? 0 : k;
    T->defend = defend;
    T->solver = solver;
    T->net = net;
    T->mix = mix;
    T->cprior = cprior;
    T->net_pieces = net_pieces;
    T->trunc = trunc;
    T->vorder = vorder;
    T->transpose = transpose;
    if (imb == 0.0 && T->mm) {
        free(T->mm);
        T->mm = NULL;
    } else if (imb > 0.0 && !T->mm && T->cap_nodes) {
        /* a kept tree searched without minimax backups: its nodes start from their means */
        T->mm = malloc(T->cap_nodes * sizeof(float));
        if (!T->mm) return PyErr_NoMemory();
        for (size_t i = 0; i < T->n_nodes; i++) T->mm[i] = T->nodes[i].n ? (float)(T->nodes[i].w / T->nodes[i].n) : 0.5f;
    }
    T->imb = imb;
    T->solve_nodes = solve_nodes;
    T->solve_pieces = solve_pieces;
    T->solve_after = solve_after;
    long done = -1;
    if (!fresh || tree_alloc(T, 1) == 0) {
        if (fresh) {
            node_init(T, &T->nodes[0], -1, 1 - R.turn, NO_OUTCOME);
            if (T->mm) T->mm[0] = 0.5f;
        }
        if (tobj) {
            tobj->used = 1;
            tobj->root_hash = h;
            tobj->root = R;
            tobj->busy = 1;
        }
        Py_BEGIN_ALLOW_THREADS
        done = mcts_run(T, B, &R, sims, seconds > 0 ? t0 + seconds : 0.0);
        Py_END_ALLOW_THREADS
        if (tobj) tobj->busy = 0;
    }
    elapsed = now_seconds() - t0;
    PyObject *children = NULL, *out = NULL;
    if (done < 0) {
        PyErr_NoMemory();
        if (tobj) {
            tree_free(T);
            tobj->used = 0;
        }
        goto end;
    }
    children = PyList_New(0);
    for (int i = 0; children && i < T->nodes[0].n_children; i++) {
        const Node *y = &T->nodes[T->nodes[0].child_base + i];
        /* With `proofs`, a fourth item: 1 proven won for the side that plays it, 0 proven lost,
           2 proven drawn, -1 open. */
        int proof = y->terminal == NO_OUTCOME ? -1 : y->terminal == DRAW ? 2 : y->terminal == y->mover;
        PyObject *t = proofs ? Py_BuildValue("(ikdi)", (int)y->code, (unsigned long)y->n, y->w, proof)
                             : Py_BuildValue("(ikd)", (int)y->code, (unsigned long)y->n, y->w);
        if (!t || PyList_Append(children, t)) Py_CLEAR(children);
        Py_XDECREF(t);
    }
    if (children) out = Py_BuildValue("(ldnO)", done, elapsed, (Py_ssize_t)T->created, children);
end:
    Py_XDECREF(children);
    if (!tobj) tree_free(T);
    return out;
}


/* ------------------------------------------------------------------------------------ */
/* Alpha-beta: the search of players/alphabeta.py, move for move (negamax, iterative     */
/* deepening by the caller's loop here, Zobrist transposition table, killers, history,   */
/* forward pruning to `width` moves below the root, seven-monolith quiescence).  The     */
/* evaluation is alphabeta.evaluate; tests compare both searches' values and node counts.*/

#define AB_WIN 100000
#define AB_INF (10 * AB_WIN)
#define AB_QDEPTH 4
#define AB_MAXPLY 128
enum { TT_EXACT = 0, TT_LOWER = 1, TT_UPPER = 2 };

typedef struct {
    uint64_t key;
    int32_t value;
    int16_t move;
    int8_t depth, flag;
} TTEntry;

typedef struct {
    const Board *B;
    TTEntry *tt;
    uint64_t tt_mask;
    long count, max_nodes;
    double deadline;
    /* The caller's stop byte (another thread sets it, GIL released meanwhile), or NULL:
       read every 64 nodes like the clock, so a stop ends the search within ~1 ms. */
    const volatile unsigned char *stop;
    int abort, width;
    int killers[AB_MAXPLY][2];
    int history[MAXCODES];
} AB;

static int ab_evaluate(const Board *B, const Pos *P)
{
    int me = P->turn, opp = 1 - me;
    int v = 100 * (P->score[me] - P->score[opp]) + 30;
    if (P->score[me] == SEVEN - 1) v += 40;
    if (P->score[opp] == SEVEN - 1) v -= 40;
    for (int a = 0; a < B->n_align; a++) {
        int lead = P->leader[a];
        if (lead < 0) continue;
        int bs = B->south[a][0], bn = B->north[a][0]; /* champions: the first strongest cell */
        for (int i = 1; i < B->n_south[a]; i++)
            if (P->key[B->south[a][i]] > P->key[bs]) bs = B->south[a][i];
        for (int i = 1; i < B->n_north[a]; i++)
            if (P->key[B->north[a][i]] > P->key[bn]) bn = B->north[a][i];
        int hl = lead == 0 ? P->height[bs] : P->height[bn];
        int ho = lead == 0 ? P->height[bn] : P->height[bs];
        int sc = 0;
        if (hl >= 4)
            sc = 25;
        else if (hl >= 2 && ho == 1)
            sc = 10;
        else if (hl == 1 && ho == 1)
            sc = -15;
        v += lead == me ? sc : -sc;
    }
    return v;
}

static inline int ab_tick(AB *S)
{
    S->count++;
    if (S->max_nodes > 0 && S->count > S->max_nodes && S->count > 1) S->abort = 1;
    if ((S->count & 63) == 0) {
        if (S->deadline > 0 && now_seconds() >= S->deadline) S->abort = 1;
        if (S->stop && *S->stop) S->abort = 1;
    }
    return S->abort;
}

static int ab_quiesce(AB *S, const Pos *P, int alpha, int beta, int ply, int qdepth)
{
    const Board *B = S->B;
    int me = P->turn, opp = 1 - me;
    if (P->score[opp] < SEVEN || qdepth <= 0) return ab_evaluate(B, P);
    uint32_t held = 0;
    for (int c = 0; c < B->n_cells; c++)
        for (int i = 0; i < B->n_through[c]; i++)
            if (P->leader[B->through[c][i]] == opp) held |= 1u << c;
    int codes[MAXCODES], n = gen_legal(B, P, codes);
    int best = -(AB_WIN - ply - 1); /* no breaking move: the opponent wins after this turn */
    for (int i = 0; i < n; i++) {
        int code = codes[i];
        if (code == B->pass_code || !(held >> (code % B->n_cells) & 1)) continue;
        Pos child = *P;
        apply(B, &child, code);
        int v;
        if (child.score[opp] >= SEVEN) {
            v = -(AB_WIN - ply - 1);
        } else {
            if (ab_tick(S)) return 0;
            v = -ab_quiesce(S, &child, -beta, -(alpha > best ? alpha : best), ply + 1, qdepth - 1);
            if (S->abort) return 0;
        }
        if (v > best) {
            best = v;
            if (best >= beta) return best;
        }
    }
    return best;
}

typedef struct {
    long score;
    int code;
} Scored;

static int scored_desc(const void *x, const void *y)
{
    const Scored *a = x, *b = y;
    if (a->score != b->score) return a->score < b->score ? 1 : -1;
    return a->code < b->code ? 1 : a->code > b->code ? -1 : 0;
}

static int ab_ordered(AB *S, Pos *P, int ply, int tt_move, int *out)
{
    const Board *B = S->B;
    int codes[MAXCODES], n = gen_legal(B, P, codes);
    if (n == 1) {
        out[0] = codes[0];
        return 1;
    }
    static const int no_killers[2] = {-1, -1};
    const int *killers = ply < AB_MAXPLY ? S->killers[ply] : no_killers;
    int8_t cache[5][MAXC];
    memset(cache, 0x7F, sizeof(cache));
    Scored sc[MAXCODES];
    int me = P->turn;
    for (int i = 0; i < n; i++) {
        int code = codes[i], d = 0;
        if (code != B->pass_code) {
            int s = piece_size(code / B->n_cells), c = code % B->n_cells;
            if (cache[s][c] == 0x7F) {
                int ds[2];
                effect(B, P, s, c, ds);
                cache[s][c] = (int8_t)(ds[me] - ds[1 - me]);
            }
            d = cache[s][c];
        }
        long v = (long)d * 1000000L + S->history[code];
        if (code == tt_move)
            v += 100000000L;
        else if (code == killers[0] || code == killers[1])
            v += 500000L;
        sc[i].score = v;
        sc[i].code = code;
    }
    qsort(sc, (size_t)n, sizeof(Scored), scored_desc);
    int w = n < S->width ? n : S->width;
    for (int i = 0; i < w; i++) out[i] = sc[i].code;
    return w;
}

static int ab_negamax(AB *S, Pos *P, int depth, int alpha, int beta, int ply)
{
    const Board *B = S->B;
    if (ab_tick(S)) return 0;
    int o = P->outcome;
    if (o != NO_OUTCOME) {
        if (o == DRAW) return 0;
        return o == P->turn ? AB_WIN - ply : -(AB_WIN - ply);
    }
    if (depth <= 0) return ab_quiesce(S, P, alpha, beta, ply, AB_QDEPTH);
    uint64_t h = hash_key(B, P);
    TTEntry *e = &S->tt[h & S->tt_mask];
    int tt_move = -1;
    if (e->key == h && e->flag >= 0) {
        tt_move = e->move;
        if (e->depth >= depth) {
            if (e->flag == TT_EXACT) return e->value;
            if (e->flag == TT_LOWER && e->value >= beta) return e->value;
            if (e->flag == TT_UPPER && e->value <= alpha) return e->value;
        }
    }
    int moves[MAXCODES], n = ab_ordered(S, P, ply, tt_move, moves);
    int alpha0 = alpha, best = -AB_INF, best_move = moves[0];
    for (int i = 0; i < n; i++) {
        int code = moves[i];
        Pos child = *P;
        apply(B, &child, code);
        int v = -ab_negamax(S, &child, depth - 1, -beta, -alpha, ply + 1);
        if (S->abort) return 0;
        if (v > best) {
            best = v;
            best_move = code;
            if (v > alpha) {
                alpha = v;
                if (alpha >= beta) {
                    if (ply < AB_MAXPLY && S->killers[ply][0] != code) {
                        S->killers[ply][1] = S->killers[ply][0];
                        S->killers[ply][0] = code;
                    }
                    S->history[code] += depth * depth;
                    break;
                }
            }
        }
    }
    e->key = h;
    e->value = best;
    e->move = (int16_t)best_move;
    e->depth = (int8_t)(depth > 127 ? 127 : depth);
    e->flag = (int8_t)(alpha0 < best && best < beta ? TT_EXACT : best >= beta ? TT_LOWER : TT_UPPER);
    return best;
}

/* Iterative deepening over the root moves (already ordered by the caller). */
static PyObject *k_alphabeta(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    PyObject *state, *rootobj, *table = Py_None, *stopobj = Py_None;
    int max_depth = 64, width = 16, tt_bits = 20;
    long max_nodes = 0;
    double seconds = 0.0;
    static char *kwlist[] = {"state", "moves", "depth", "nodes", "seconds", "width", "tt_bits", "table", "stop", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O|ildiiOO:alphabeta", kwlist, &StateType, &state, &rootobj,
                                     &max_depth, &max_nodes, &seconds, &width, &tt_bits, &table, &stopobj))
        return NULL;
    const Board *B = BRD(state);
    Pos R = ST(state)->pos;
    if (R.outcome != NO_OUTCOME) {
        PyErr_SetString(PyExc_ValueError, "alphabeta: the game is over, there is nothing to search");
        return NULL;
    }
    if (max_depth < 1 || max_depth > 64 || width < 1 || max_nodes < 0 || seconds < 0 || tt_bits < 10 || tt_bits > 26) {
        PyErr_SetString(PyExc_ValueError, "alphabeta: need depth in [1, 64], width >= 1, nodes/seconds >= 0, "
                                          "tt_bits in [10, 26]");
        return NULL;
    }
    int root[MAXCODES];
    int n = int_list(rootobj, root, MAXCODES, 0, B->pass_code + 1, "alphabeta root moves");
    if (n < 0) return NULL;
    for (int i = 0; i < n; i++)
        if (!is_legal(B, &R, root[i])) {
            PyErr_Format(PyExc_ValueError, "alphabeta: root move %d is not legal here", root[i]);
            return NULL;
        }
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "alphabeta: no root moves given");
        return NULL;
    }
    /* The table is the caller's writable buffer when given (kept between moves), else a fresh one. */
    Py_buffer view = {0};
    int have_view = 0;
    size_t tt_len = sizeof(TTEntry) << tt_bits;
    if (table != Py_None) {
        if (PyObject_GetBuffer(table, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
        have_view = 1;
        if ((size_t)view.len != tt_len) {
            PyBuffer_Release(&view);
            PyErr_Format(PyExc_ValueError, "alphabeta: table must be %zu bytes for tt_bits=%d", tt_len, tt_bits);
            return NULL;
        }
    }
    /* stop: a buffer whose first byte another thread sets to end the search at once (the
       best move of the last completed depth is returned).  Held while searching, so a
       bytearray cannot be resized under us. */
    Py_buffer stop_view = {0};
    int have_stop = 0;
    if (stopobj != Py_None) {
        if (PyObject_GetBuffer(stopobj, &stop_view, PyBUF_SIMPLE) < 0) {
            if (have_view) PyBuffer_Release(&view);
            return NULL;
        }
        have_stop = 1;
        if (stop_view.len < 1) {
            PyBuffer_Release(&stop_view);
            if (have_view) PyBuffer_Release(&view);
            PyErr_SetString(PyExc_ValueError, "alphabeta: stop must be a buffer of at least one byte");
            return NULL;
        }
    }
    AB *S = calloc(1, sizeof(AB));
    TTEntry *tt = have_view ? (TTEntry *)view.buf : S ? malloc(tt_len) : NULL;
    if (!S || !tt) {
        free(S);
        if (have_view) PyBuffer_Release(&view);
        if (have_stop) PyBuffer_Release(&stop_view);
        return PyErr_NoMemory();
    }
    S->stop = have_stop ? (const volatile unsigned char *)stop_view.buf : NULL;
    if (!have_view) memset(tt, 0xFF, tt_len); /* flag -1: empty (a caller's table starts as 0xFF bytes too) */
    S->B = B;
    S->tt = tt;
    S->tt_mask = ((uint64_t)1 << tt_bits) - 1;
    S->max_nodes = max_nodes;
    S->width = width;
    double t0 = now_seconds();
    S->deadline = seconds > 0 ? t0 + seconds : 0.0;
    int best = root[0], best_value = -AB_INF, d;
    Py_BEGIN_ALLOW_THREADS
    for (d = 1; d <= max_depth; d++) {
        for (int i = 0; i < AB_MAXPLY; i++) S->killers[i][0] = S->killers[i][1] = -1;
        int alpha = -AB_INF, beta = AB_INF, move = root[0];
        for (int i = 0; i < n && !S->abort; i++) {
            Pos child = R;
            apply(B, &child, root[i]);
            int v = -ab_negamax(S, &child, d - 1, -beta, -alpha, 1);
            if (!S->abort && v > alpha) {
                alpha = v;
                move = root[i];
            }
        }
        if (S->abort) {
            d--;
            break;
        }
        best = move;
        best_value = alpha;
        for (int i = 0; i < n; i++) /* the best move first at the next depth */
            if (root[i] == move) {
                memmove(root + 1, root, (size_t)i * sizeof(int));
                root[0] = move;
                break;
            }
        if (abs(alpha) >= AB_WIN - 1000 || n == 1) break;
    }
    if (d > max_depth) d = max_depth;
    Py_END_ALLOW_THREADS
    double elapsed = now_seconds() - t0;
    long count = S->count;
    if (have_view)
        PyBuffer_Release(&view);
    else
        free(tt);
    if (have_stop) PyBuffer_Release(&stop_view);
    free(S);
    return Py_BuildValue("(iiild)", best, best_value, d, count, elapsed);
}

/* solve(state, nodes, seconds, tt_bits, table, moves, line): the solver's Python face. */
/* (result, plies) of a value; have 0: (None, None); have 1: win/draw/loss only (plies -1). */
static PyObject *sv_result(int value, int have)
{
    if (!have) return Py_BuildValue("(OO)", Py_None, Py_None);
    int result = value > 0 ? 1 : value < 0 ? -1 : 0;
    int plies = have == 1 || !value ? -1 : value > 0 ? SV_WIN - value : SV_WIN + value;
    return Py_BuildValue("(ii)", result, plies);
}

static PyObject *k_solve(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    PyObject *state, *table = Py_None;
    long max_nodes = 0;
    double seconds = 0.0;
    int tt_bits = 18, moves = 0, want_line = 1, exact = 1;
    static char *kwlist[] = {"state", "nodes", "seconds", "tt_bits", "table", "moves", "line", "exact", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|ldiOipp:solve", kwlist, &StateType, &state, &max_nodes,
                                     &seconds, &tt_bits, &table, &moves, &want_line, &exact))
        return NULL;
    if (max_nodes < 0 || !(seconds >= 0.0) || isinf(seconds) || tt_bits < 10 || tt_bits > 28 || moves < 0 ||
        moves > 2) {
        PyErr_SetString(PyExc_ValueError, "solve: need nodes >= 0, a finite seconds >= 0 (0: no limit), "
                                          "tt_bits in [10, 28] and moves 0, 1 or 2");
        return NULL;
    }
    const Board *B = BRD(state);
    Pos R = ST(state)->pos;
    Py_buffer view = {0};
    int have_view = 0;
    size_t tt_len = sizeof(SvEntry) << tt_bits;
    if (table != Py_None) {
        if (PyObject_GetBuffer(table, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
        have_view = 1;
        if ((size_t)view.len != tt_len) {
            PyBuffer_Release(&view);
            PyErr_Format(PyExc_ValueError, "solve: table must be %zu bytes for tt_bits=%d", tt_len, tt_bits);
            return NULL;
        }
    }
    Sv *S = malloc(sizeof(Sv));
    SvEntry *tt = have_view ? (SvEntry *)view.buf : S ? calloc(1, tt_len) : NULL;
    if (!S || !tt) {
        free(S);
        if (have_view) PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    double t0 = now_seconds();
    sv_init(S, B, tt, tt_bits, max_nodes, seconds > 0 ? t0 + seconds : 0.0);
    int value = 0, best = -1, status, line[SV_MAXPLY], n_line = 0;
    int codes[MAXCODES], n_codes = 0, mvalue[MAXCODES], mhave[MAXCODES];
    Py_BEGIN_ALLOW_THREADS
    status = sv_value(S, &R, 0, exact, &value, &best);
    if (status == 0 && want_line) {
        /* The principal line: each position's best move again (the table makes it cheap); a
           line cut by the budget stops there, the value stands. */
        Pos P = R;
        int mv = best, v;
        while (P.outcome == NO_OUTCOME && n_line < SV_MAXPLY) {
            if (n_line && sv_value(S, &P, 0, exact, &v, &mv)) break;
            line[n_line++] = mv;
            apply(B, &P, mv);
        }
    }
    if (status == 0 && moves && R.outcome == NO_OUTCOME) {
        /* Every root move's value for its mover: exact (moves=2), or win/draw/loss only (1). */
        n_codes = gen_legal(B, &R, codes);
        for (int i = 0; i < n_codes; i++) {
            mhave[i] = mvalue[i] = 0;
            if (S->abort) continue;
            if (codes[i] == best) {
                mvalue[i] = value;
                mhave[i] = 2;
                continue;
            }
            Pos child = R;
            int v, mv;
            apply(B, &child, codes[i]);
            if (sv_value(S, &child, 1, moves == 2, &v, &mv) == 0) {
                mvalue[i] = -v;
                mhave[i] = moves == 2 || child.outcome != NO_OUTCOME ? 2 : 1; /* 1: a bound, its sign only */
            }
        }
    }
    Py_END_ALLOW_THREADS
    double elapsed = now_seconds() - t0;
    long count = S->count;
    if (have_view)
        PyBuffer_Release(&view);
    else
        free(tt);
    free(S);
    PyObject *pyline = PyList_New(0), *pymoves = PyList_New(0), *out = NULL;
    if (!pyline || !pymoves) goto end;
    for (int i = 0; i < n_line; i++) {
        PyObject *x = PyLong_FromLong(line[i]);
        if (!x || PyList_Append(pyline, x)) {
            Py_XDECREF(x);
            goto end;
        }
        Py_DECREF(x);
    }
    for (int i = 0; i < n_codes; i++) {
        PyObject *r = sv_result(mvalue[i], mhave[i]), *t = r ? Py_BuildValue("(iO)", codes[i], r) : NULL;
        Py_XDECREF(r);
        if (!t || PyList_Append(pymoves, t)) {
            Py_XDECREF(t);
            goto end;
        }
        Py_DECREF(t);
    }
    {
        PyObject *r = sv_result(value, status == 0 ? 1 + (exact || R.outcome != NO_OUTCOME) : 0);
        if (r) out = Py_BuildValue("(OiOOld)", r, best, pyline, pymoves, count, elapsed);
        Py_XDECREF(r);
    }
end:
    Py_XDECREF(pyline);
    Py_XDECREF(pymoves);
    return out;
}

/* ------------------------------------------------------------------------------------ */
/* BatchEngine: n games held in C for the batched environment (envs/vector.py).          */
/* Arrays cross the boundary through the buffer protocol only (numpy arrays in practice),
   so this file needs no numpy headers: callers pass index arrays (int64) and the output
   arrays to fill (float32 observations, int8 masks, int64 status).  The observation layout
   is docs/interop.md's, the same as envs/encoding.py; vector.py checks the offsets below
   against the encoding's segments before using this engine. */

#define OBS_LEVELS 4
#define OBS_LEVEL_WIDTH 10

typedef struct {
    PyObject_HEAD
    BoardObject *board;
    Py_ssize_t n;
    Pos *pos;
    Pos start;
    int8_t camp[MAXC];
    /* segment offsets in encoding order: towers, own_camp, reserves, leaders, score, seven,
       last_piece, last_cell, passed, turn; then the total size */
    int off[10], obs_size;
} BatchObject;

enum { O_TOWERS, O_CAMP, O_RESERVES, O_LEADERS, O_SCORE, O_SEVEN, O_LPIECE, O_LCELL, O_PASSED, O_TURN };

static PyTypeObject BatchType;

/* A C-contiguous buffer of `kind` items ('q' int64, 'f' float32, 'b' int8, uint8 or bool); want < 0: any length. */
static int batch_buffer(PyObject *obj, Py_buffer *v, int writable, char kind, Py_ssize_t want, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, v, flags) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous%s array, got %.80s", what,
                     writable ? " writable" : "", Py_TYPE(obj)->tp_name);
        return -1;
    }
    const char *f = v->format ? v->format : "B";
    /* native or explicitly little-endian standard sizes; the platforms we build on are little-endian */
    if (*f == '@' || *f == '=' || *f == '<') f++;
    Py_ssize_t size = kind == 'q' ? 8 : kind == 'f' ? 4 : 1;
    int ok = v->itemsize == size && *f && f[1] == '\0' &&
             (kind == 'q' ? (*f == 'q' || *f == 'l') : kind == 'f' ? *f == 'f' : (*f == 'b' || *f == 'B' || *f == '?'));
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous %s array, got format '%s' (item size %zd)", what,
                     kind == 'q' ? "int64" : kind == 'f' ? "float32" : "int8, uint8 or bool", v->format ? v->format : "B",
                     v->itemsize);
        PyBuffer_Release(v);
        return -1;
    }
    if (want >= 0 && v->len / size != want) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items, got %zd", what, want, v->len / size);
        PyBuffer_Release(v);
        return -1;
    }
    return 0;
}

/* Check every game index (0 <= g < n); returns the count or -1. */
static int batch_games(BatchObject *self, const Py_buffer *v)
{
    const int64_t *g = (const int64_t *)v->buf;
    Py_ssize_t k = v->len / 8;
    for (Py_ssize_t i = 0; i < k; i++)
        if (g[i] < 0 || g[i] >= self->n) {
            PyErr_Format(PyExc_IndexError, "game index %lld out of range [0, %zd)", (long long)g[i], self->n);
            return -1;
        }
    return 0;
}

static int batch_sides(const Py_buffer *v)
{
    const int64_t *s = (const int64_t *)v->buf;
    for (Py_ssize_t i = 0; i < v->len / 8; i++)
        if (s[i] != 0 && s[i] != 1) {
            PyErr_Format(PyExc_ValueError, "side %lld: sides are 0 (South) or 1 (North)", (long long)s[i]);
            return -1;
        }
    return 0;
}

static PyObject *Batch_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *board, *campseq;
    Py_ssize_t n;
    static char *kwlist[] = {"board", "n", "cell_camp", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!nO:BatchEngine", kwlist, &BoardType, &board, &n, &campseq))
        return NULL;
    const Board *B = &((BoardObject *)board)->b;
    if (n < 1 || n > (Py_ssize_t)1 << 24) {
        PyErr_Format(PyExc_ValueError, "BatchEngine: n must be in [1, 2**24], got %zd", n);
        return NULL;
    }
    int camp[MAXC];
    int k = int_list(campseq, camp, MAXC, 0, 2, "cell_camp");
    if (k < 0) return NULL;
    if (k != B->n_cells) {
        PyErr_Format(PyExc_ValueError, "cell_camp: %d entries for %d cells", k, B->n_cells);
        return NULL;
    }
    BatchObject *self = (BatchObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->pos = PyMem_Malloc((size_t)n * sizeof(Pos));
    if (!self->pos) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    Py_INCREF(board);
    self->board = (BoardObject *)board;
    self->n = n;
    for (int c = 0; c < k; c++) self->camp[c] = (int8_t)camp[c];
    pos_init(B, &self->start);
    for (Py_ssize_t i = 0; i < n; i++) self->pos[i] = self->start;
    int nc = B->n_cells, na = B->n_align;
    int sizes[10] = {nc * OBS_LEVELS * OBS_LEVEL_WIDTH, nc, 2 * N_PIECES, 3 * na, 2 * (na + 1), 2, N_PIECES, nc, 1, 2};
    int o = 0;
    for (int i = 0; i < 10; i++) {
        self->off[i] = o;
        o += sizes[i];
    }
    self->obs_size = o;
    return (PyObject *)self;
}

static void Batch_dealloc(BatchObject *self)
{
    PyMem_Free(self->pos);
    Py_XDECREF(self->board);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Batch_reset(PyObject *op, PyObject *arg)
{
    BatchObject *self = (BatchObject *)op;
    Py_buffer g;
    if (batch_buffer(arg, &g, 0, 'q', -1, "games")) return NULL;
    if (batch_games(self, &g)) {
        PyBuffer_Release(&g);
        return NULL;
    }
    const int64_t *gi = (const int64_t *)g.buf;
    for (Py_ssize_t i = 0; i < g.len / 8; i++) self->pos[gi[i]] = self->start;
    PyBuffer_Release(&g);
    Py_RETURN_NONE;
}

/* All moves are checked before any is played, so a bad batch changes nothing. */
static PyObject *Batch_push(PyObject *op, PyObject *args)
{
    BatchObject *self = (BatchObject *)op;
    const Board *B = &self->board->b;
    PyObject *go, *co;
    if (!PyArg_ParseTuple(args, "OO:push", &go, &co)) return NULL;
    Py_buffer g, c;
    if (batch_buffer(go, &g, 0, 'q', -1, "games")) return NULL;
    if (batch_buffer(co, &c, 0, 'q', g.len / 8, "codes")) {
        PyBuffer_Release(&g);
        return NULL;
    }
    PyObject *result = NULL;
    const int64_t *gi = (const int64_t *)g.buf, *ci = (const int64_t *)c.buf;
    Py_ssize_t k = g.len / 8;
    /* one move per game per call: with a repeated game the second move's legality would
       depend on the first, which the up-front check cannot see */
    uint8_t *seen = NULL;
    if (batch_games(self, &g)) goto done;
    seen = PyMem_Calloc((size_t)self->n, 1);
    if (!seen) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t bad = -1;
    int why = 0;
    Py_BEGIN_ALLOW_THREADS /* plain C on the engine's positions: other threads run meanwhile */
    for (Py_ssize_t i = 0; i < k && bad < 0; i++) {
        const Pos *P = &self->pos[gi[i]];
        why = seen[gi[i]]++ ? 1 : P->outcome != NO_OUTCOME ? 2
              : (ci[i] < 0 || ci[i] > B->pass_code || !is_legal(B, P, (long)ci[i])) ? 3 : 0;
        if (why) bad = i;
    }
    if (bad < 0)
        for (Py_ssize_t i = 0; i < k; i++) apply(B, &self->pos[gi[i]], (int)ci[i]);
    Py_END_ALLOW_THREADS
    if (bad >= 0) {
        long long gb = (long long)gi[bad], cb = (long long)ci[bad];
        if (why == 1) PyErr_Format(PyExc_ValueError, "game %lld appears twice in one push", gb);
        else if (why == 2) PyErr_Format(PyExc_ValueError, "game %lld is over: no move can be pushed", gb);
        else PyErr_Format(PyExc_ValueError, "illegal move code %lld in game %lld", cb, gb);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_Free(seen);
    PyBuffer_Release(&g);
    PyBuffer_Release(&c);
    return result;
}

static PyObject *Batch_status(PyObject *op, PyObject *args)
{
    BatchObject *self = (BatchObject *)op;
    PyObject *to, *oo;
    if (!PyArg_ParseTuple(args, "OO:status", &to, &oo)) return NULL;
    Py_buffer t, o;
    if (batch_buffer(to, &t, 1, 'q', self->n, "turn")) return NULL;
    if (batch_buffer(oo, &o, 1, 'q', self->n, "outcome")) {
        PyBuffer_Release(&t);
        return NULL;
    }
    int64_t *ti = (int64_t *)t.buf, *oi = (int64_t *)o.buf;
    for (Py_ssize_t i = 0; i < self->n; i++) {
        ti[i] = self->pos[i].turn;
        oi[i] = self->pos[i].outcome;
    }
    PyBuffer_Release(&t);
    PyBuffer_Release(&o);
    Py_RETURN_NONE;
}

/* One observation (envs/encoding.py's Encoding.observe) into obs[0..obs_size), zeroed first: the
   flat view unturned (view_flat_one, in the views' section below). */
static void batch_observe_one(const BatchObject *self, const Pos *P, int me, float *obs);

static PyObject *Batch_observe(PyObject *op, PyObject *args)
{
    BatchObject *self = (BatchObject *)op;
    PyObject *go, *so, *out;
    if (!PyArg_ParseTuple(args, "OOO:observe", &go, &so, &out)) return NULL;
    Py_buffer g, s, o;
    if (batch_buffer(go, &g, 0, 'q', -1, "games")) return NULL;
    Py_ssize_t k = g.len / 8;
    if (batch_buffer(so, &s, 0, 'q', k, "sides")) {
        PyBuffer_Release(&g);
        return NULL;
    }
    if (batch_buffer(out, &o, 1, 'f', k * self->obs_size, "observations")) {
        PyBuffer_Release(&g);
        PyBuffer_Release(&s);
        return NULL;
    }
    PyObject *result = NULL;
    if (!batch_games(self, &g) && !batch_sides(&s)) {
        const int64_t *gi = (const int64_t *)g.buf, *si = (const int64_t *)s.buf;
        float *obs = (float *)o.buf;
        for (Py_ssize_t i = 0; i < k; i++)
            batch_observe_one(self, &self->pos[gi[i]], (int)si[i], obs + i * self->obs_size);
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&g);
    PyBuffer_Release(&s);
    PyBuffer_Release(&o);
    return result;
}

/* One legal mask (placements by code, the pass when none; all zero once over). */
static void batch_mask_one(const Board *B, const Pos *P, int8_t *mask)
{
    memset(mask, 0, (size_t)(B->pass_code + 1));
    if (P->outcome != NO_OUTCOME) return;
    int any = 0;
    uint32_t r = P->reserve[(int)P->turn];
    while (r) {
        int p = __builtin_ctz(r);
        r &= r - 1;
        uint32_t cells = piece_cells(B, P, p);
        any |= cells != 0;
        while (cells) {
            int c = __builtin_ctz(cells);
            cells &= cells - 1;
            mask[p * B->n_cells + c] = 1;
        }
    }
    if (!any) mask[B->pass_code] = 1;
}

static PyObject *Batch_masks(PyObject *op, PyObject *args)
{
    BatchObject *self = (BatchObject *)op;
    const Board *B = &self->board->b;
    PyObject *go, *out;
    if (!PyArg_ParseTuple(args, "OO:masks", &go, &out)) return NULL;
    Py_buffer g, m;
    if (batch_buffer(go, &g, 0, 'q', -1, "games")) return NULL;
    Py_ssize_t k = g.len / 8;
    if (batch_buffer(out, &m, 1, 'b', k * (B->pass_code + 1), "masks")) {
        PyBuffer_Release(&g);
        return NULL;
    }
    PyObject *result = NULL;
    if (!batch_games(self, &g)) {
        const int64_t *gi = (const int64_t *)g.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < k; i++)
            batch_mask_one(B, &self->pos[gi[i]], (int8_t *)m.buf + i * (B->pass_code + 1));
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&g);
    PyBuffer_Release(&m);
    return result;
}

/* The games in progress whose side to move is sides[i], written to out; returns their count. */
static PyObject *Batch_to_move(PyObject *op, PyObject *args)
{
    BatchObject *self = (BatchObject *)op;
    PyObject *go, *so, *out;
    if (!PyArg_ParseTuple(args, "OOO:to_move", &go, &so, &out)) return NULL;
    Py_buffer g, s, o;
    if (batch_buffer(go, &g, 0, 'q', -1, "games")) return NULL;
    Py_ssize_t k = g.len / 8, j = 0;
    if (batch_buffer(so, &s, 0, 'q', k, "sides")) {
        PyBuffer_Release(&g);
        return NULL;
    }
    if (batch_buffer(out, &o, 1, 'q', k, "out")) {
        PyBuffer_Release(&g);
        PyBuffer_Release(&s);
        return NULL;
    }
    PyObject *result = NULL;
    if (!batch_games(self, &g) && !batch_sides(&s)) {
        const int64_t *gi = (const int64_t *)g.buf, *si = (const int64_t *)s.buf;
        int64_t *oi = (int64_t *)o.buf;
        for (Py_ssize_t i = 0; i < k; i++) {
            const Pos *P = &self->pos[gi[i]];
            if (P->outcome == NO_OUTCOME && P->turn == si[i]) oi[j++] = gi[i];
        }
        result = PyLong_FromSsize_t(j);
    }
    PyBuffer_Release(&g);
    PyBuffer_Release(&s);
    PyBuffer_Release(&o);
    return result;
}

/* Every game's monolith counts, South's then North's (the vector env's reward shaping, issue 35). */
static PyObject *Batch_scores(PyObject *op, PyObject *arg)
{
    BatchObject *self = (BatchObject *)op;
    Py_buffer o;
    if (batch_buffer(arg, &o, 1, 'q', 2 * self->n, "scores")) return NULL;
    int64_t *out = (int64_t *)o.buf;
    for (Py_ssize_t i = 0; i < self->n; i++) {
        out[2 * i] = self->pos[i].score[0];
        out[2 * i + 1] = self->pos[i].score[1];
    }
    PyBuffer_Release(&o);
    Py_RETURN_NONE;
}

static PyObject *Batch_get_n(PyObject *op, void *Py_UNUSED(cl)) { return PyLong_FromSsize_t(((BatchObject *)op)->n); }

static PyObject *Batch_get_observation_size(PyObject *op, void *Py_UNUSED(cl))
{
    return PyLong_FromLong(((BatchObject *)op)->obs_size);
}

static PyObject *Batch_get_n_actions(PyObject *op, void *Py_UNUSED(cl))
{
    return PyLong_FromLong(((BatchObject *)op)->board->b.pass_code + 1);
}

static PyObject *Batch_get_offsets(PyObject *op, void *Py_UNUSED(cl))
{
    const int *o = ((BatchObject *)op)->off;
    return Py_BuildValue("(iiiiiiiiii)", o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9]);
}

static PyMethodDef Batch_methods[] = {
    {"reset", Batch_reset, METH_O, "reset(games): put those games (int64 indices) back at the start."},
    {"push", Batch_push, METH_VARARGS,
     "push(games, codes): play codes[k] in games[k] (int64 arrays); all checked first, ValueError if any is illegal."},
    {"status", Batch_status, METH_VARARGS, "status(turn, outcome): fill two int64 arrays of length n."},
    {"observe", Batch_observe, METH_VARARGS,
     "observe(games, sides, out): fill float32 out (len(games) x observation_size) with the flat observations."},
    {"masks", Batch_masks, METH_VARARGS, "masks(games, out): fill int8 out (len(games) x n_actions) with legal masks."},
    {"scores", Batch_scores, METH_O, "scores(out): fill int64 out (n x 2) with every game's monolith counts."},
    {"to_move", Batch_to_move, METH_VARARGS,
     "to_move(games, sides, out) -> k: out[:k] = the games in progress with sides[i] to move."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Batch_getset[] = {
    {"n", Batch_get_n, NULL, "number of games", NULL},
    {"observation_size", Batch_get_observation_size, NULL, "floats per observation", NULL},
    {"n_actions", Batch_get_n_actions, NULL, "entries per mask (move codes and the pass)", NULL},
    {"offsets", Batch_get_offsets, NULL, "segment offsets, in envs/encoding.py's order", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject BatchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "jericho_game._kernel.BatchEngine",
    .tp_basicsize = sizeof(BatchObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "BatchEngine(board, n, cell_camp): n games held in C for envs/vector.py (arrays by the buffer protocol).",
    .tp_new = Batch_new,
    .tp_dealloc = (destructor)Batch_dealloc,
    .tp_methods = Batch_methods,
    .tp_getset = Batch_getset,
};

/* ---- observations (planar, canonical) ---- */
/* The vector env's observation in its final form, written by C for a whole batch: the flat
   vector or envs/planar.py's planes (C x H x W, float32), in the absolute view or the canonical
   one (envs/encoding.py's half turn applied to North's observations and masks, so that every
   observer looks like South).  Before this, vector.py turned and laid out the flat vectors in
   NumPy, which cost several times the engine's own work at B=1024.

   batch_views(engine, games, sides, out, masks, layout): `sides` are the observers, `out` gets
   len(games) observations, `masks` (or None) the legal masks in the same view.  `layout` is an
   int64 array built once by vector.py from the Python definitions (so there is one source of
   truth for the geometry): [planar, canonical, height, width, n_cells, n_align,
   cell_pos[n_cells] (grid position of each cell, row-major), half_cell[n_cells] (the half
   turn's image of each cell), half_align[n_align] (of each alignment)].  It is checked on
   every call (a few dozen integers) and the planes' channels are derived from the flat
   layout the BatchEngine holds:
     0..39 tower[level][k], 40 own_camp, 41 on_board, 42 last_cell, 43 led_by_observer,
     44 led_by_opponent, then one constant plane per flat value of the segments reserves ..
     last_piece, passed and turn (in flat order). */

#define VIEW_HEAD 6
#define VIEW_CELL_CHANNELS 45
/* the per-cell planes, then reserves, leaders, score, seven, last_piece, passed, turn at most */
#define VIEW_MAX_CHANNELS (VIEW_CELL_CHANNELS + 2 * N_PIECES + 3 * MAXA + 2 * (MAXA + 1) + 2 + N_PIECES + 1 + 2)

typedef struct {
    int planar, canonical, height, width, hw, channels, obs_len;
    int cell_pos[MAXC], half_cell[MAXC], half_align[MAXA];
} ViewLayout;

/* Parse and check `layout` against the engine's board; returns 0 or -1 with an exception set. */
static int view_layout(const BatchObject *self, const Py_buffer *v, ViewLayout *L)
{
    const Board *B = &self->board->b;
    const int64_t *x = (const int64_t *)v->buf;
    Py_ssize_t len = v->len / 8;
    int nc = B->n_cells, na = B->n_align;
    if (len != VIEW_HEAD + 2 * nc + na || x[4] != nc || x[5] != na) {
        PyErr_Format(PyExc_ValueError, "layout: expected %d int64 values for %d cells and %d alignments, got %zd",
                     VIEW_HEAD + 2 * nc + na, nc, na, len);
        return -1;
    }
    if ((x[0] != 0 && x[0] != 1) || (x[1] != 0 && x[1] != 1)) {
        PyErr_SetString(PyExc_ValueError, "layout: planar and canonical are 0 or 1");
        return -1;
    }
    if (x[2] < 1 || x[3] < 1 || x[2] > MAXC || x[3] > MAXC || x[2] * x[3] < nc || x[2] * x[3] > 32) {
        PyErr_Format(PyExc_ValueError, "layout: a %lld x %lld grid: it must hold the %d cells, in at most 32 places",
                     (long long)x[2], (long long)x[3], nc);
        return -1;
    }
    L->planar = (int)x[0];
    L->canonical = (int)x[1];
    L->height = (int)x[2];
    L->width = (int)x[3];
    L->hw = L->height * L->width;
    uint32_t used_pos = 0;
    uint32_t used_cell = 0, used_align = 0;
    for (int c = 0; c < nc; c++) {
        int64_t pos = x[VIEW_HEAD + c], img = x[VIEW_HEAD + nc + c];
        if (pos < 0 || pos >= L->hw || (used_pos >> pos & 1)) {
            PyErr_Format(PyExc_ValueError, "layout: cell %d's grid position %lld is out of range or taken", c,
                         (long long)pos);
            return -1;
        }
        if (img < 0 || img >= nc || (used_cell >> img & 1)) {
            PyErr_Format(PyExc_ValueError, "layout: half_cell is not a permutation of the cells (cell %d -> %lld)",
                         c, (long long)img);
            return -1;
        }
        used_pos |= 1u << pos;
        used_cell |= 1u << img;
        L->cell_pos[c] = (int)pos;
        L->half_cell[c] = (int)img;
    }
    for (int a = 0; a < na; a++) {
        int64_t img = x[VIEW_HEAD + 2 * nc + a];
        if (img < 0 || img >= na || (used_align >> img & 1)) {
            PyErr_Format(PyExc_ValueError,
                         "layout: half_align is not a permutation of the alignments (alignment %d -> %lld)", a,
                         (long long)img);
            return -1;
        }
        used_align |= 1u << img;
        L->half_align[a] = (int)img;
    }
    const int *off = self->off;
    L->channels = VIEW_CELL_CHANNELS + (off[O_LCELL] - off[O_RESERVES]) + (self->obs_size - off[O_PASSED]);
    L->obs_len = L->planar ? L->channels * L->hw : self->obs_size;
    return 0;
}

/* The flat observation of P seen by `me`, turned by the half turn when `turned`. */
static void view_flat_one(const BatchObject *self, const ViewLayout *L, const Pos *P, int me, int turned, float *obs)
{
    const Board *B = &self->board->b;
    const int *off = self->off;
    int nc = B->n_cells, them = 1 - me;
    memset(obs, 0, (size_t)self->obs_size * sizeof(float));
    for (int c = 0; c < nc; c++) {
        int at = turned ? L->half_cell[c] : c;
        uint32_t x = P->code[c];
        for (int level = 0; x; level++, x >>= 5) {
            int p = (int)(x & 31) - 1;
            float *cl = obs + off[O_TOWERS] + (at * OBS_LEVELS + level) * OBS_LEVEL_WIDTH;
            cl[piece_size(p)] = 1.0f;
            cl[5 + piece_colour(p)] = 1.0f;
        }
        if (self->camp[c] == me) obs[off[O_CAMP] + at] = 1.0f;
    }
    for (int p = 0; p < N_PIECES; p++) {
        if (P->reserve[me] >> p & 1) obs[off[O_RESERVES] + p] = 1.0f;
        if (P->reserve[them] >> p & 1) obs[off[O_RESERVES] + N_PIECES + p] = 1.0f;
    }
    for (int a = 0; a < B->n_align; a++) {
        int who = P->leader[a], at = turned ? L->half_align[a] : a;
        obs[off[O_LEADERS] + at * 3 + (who < 0 ? 2 : who == me ? 0 : 1)] = 1.0f;
    }
    int mine = P->score[me], theirs = P->score[them];
    obs[off[O_SCORE] + mine] = 1.0f;
    obs[off[O_SCORE] + B->n_align + 1 + theirs] = 1.0f;
    if (mine >= SEVEN) obs[off[O_SEVEN]] = 1.0f;
    if (theirs >= SEVEN) obs[off[O_SEVEN] + 1] = 1.0f;
    if (P->last_cell >= 0) {
        obs[off[O_LPIECE] + P->last_piece] = 1.0f;
        obs[off[O_LCELL] + (turned ? L->half_cell[(int)P->last_cell] : P->last_cell)] = 1.0f;
    }
    if (P->passes) obs[off[O_PASSED]] = 1.0f;
    if (P->turn == me) obs[off[O_TURN]] = 1.0f;
    if (me == 1 && !turned) obs[off[O_TURN] + 1] = 1.0f; /* the half turn makes North's observer South */
}

static void batch_observe_one(const BatchObject *self, const Pos *P, int me, float *obs)
{
    view_flat_one(self, NULL, P, me, 0, obs); /* unturned: the layout is never read */
}

/* The channel of a constant plane: flat index f, a value of reserves .. last_piece, passed or turn. */
static inline int view_channel(const int *off, int f)
{
    return VIEW_CELL_CHANNELS +
           (f < off[O_LCELL] ? f - off[O_RESERVES] : off[O_LCELL] - off[O_RESERVES] + f - off[O_PASSED]);
}

/* Stores for the planes.  A batch of planes is 22 MB at B=1024, far more than a core's cache, and the
   caller reads it later if at all: non-temporal stores (SSE2, on every x86-64) write it without first
   reading each line into the cache and without pushing out what the rest of the step works on.  Other
   targets, or a destination not 16-byte aligned, get plain stores (the same values). */
#if defined(__SSE2__)
#include <emmintrin.h>
#define VIEW_STREAM 1
#else
#define VIEW_STREAM 0
#endif

/* The four floats of a nibble of a plane's bits: bit i -> element i. */
static const float view_nibble[16][4] __attribute__((aligned(16))) = {
    {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 1, 0, 0}, {0, 0, 1, 0}, {1, 0, 1, 0}, {0, 1, 1, 0}, {1, 1, 1, 0},
    {0, 0, 0, 1}, {1, 0, 0, 1}, {0, 1, 0, 1}, {1, 1, 0, 1}, {0, 0, 1, 1}, {1, 0, 1, 1}, {0, 1, 1, 1}, {1, 1, 1, 1},
};

/* One plane of hw floats (<= 32): 1.0 where `bits` has a 1, else 0.0. */
static inline void view_store_plane(float *dst, uint32_t bits, int hw)
{
    int j = 0;
#if VIEW_STREAM
    if (((uintptr_t)dst & 15) == 0) {
        if (hw == 28) { /* the standard grid: a constant count, unrolled by the compiler */
            for (int i = 0; i < 28; i += 4) _mm_stream_ps(dst + i, _mm_load_ps(view_nibble[bits >> i & 15]));
            return;
        }
        for (; j + 4 <= hw; j += 4) _mm_stream_ps(dst + j, _mm_load_ps(view_nibble[bits >> j & 15]));
    }
#endif
    for (; j < hw; j++) dst[j] = (float)(bits >> j & 1);
}

/* The planes of P seen by `me` (envs/planar.py's Planar.from_flat of the flat view above): each plane
   as a bit mask over the grid first (the constant ones all ones or all zeros), then every float of
   the output stored once. */
static void view_planar_bits(const BatchObject *self, const ViewLayout *L, const Pos *P, int me, int turned,
                             uint32_t *bits)
{
    const Board *B = &self->board->b;
    const int *off = self->off;
    int nc = B->n_cells, hw = L->hw, them = 1 - me;
    uint32_t full = hw == 32 ? 0xFFFFFFFFu : (1u << hw) - 1;
    memset(bits, 0, (size_t)L->channels * sizeof(uint32_t));
    for (int c = 0; c < nc; c++) {
        uint32_t at = 1u << L->cell_pos[turned ? L->half_cell[c] : c];
        uint32_t x = P->code[c];
        for (int level = 0; x; level++, x >>= 5) {
            int p = (int)(x & 31) - 1;
            bits[level * OBS_LEVEL_WIDTH + piece_size(p)] |= at;
            bits[level * OBS_LEVEL_WIDTH + 5 + piece_colour(p)] |= at;
        }
        if (self->camp[c] == me) bits[40] |= at;
        bits[41] |= at;
        for (int t = 0; t < B->n_through[c]; t++) {
            int who = P->leader[B->through[c][t]];
            if (who == me) bits[43] |= at;
            else if (who == them) bits[44] |= at;
        }
    }
#define CONST_ON(f) (bits[view_channel(off, (f))] = full)
    if (P->last_cell >= 0) {
        int c = P->last_cell;
        bits[42] |= 1u << L->cell_pos[turned ? L->half_cell[c] : c];
        CONST_ON(off[O_LPIECE] + P->last_piece);
    }
    for (int p = 0; p < N_PIECES; p++) {
        if (P->reserve[me] >> p & 1) CONST_ON(off[O_RESERVES] + p);
        if (P->reserve[them] >> p & 1) CONST_ON(off[O_RESERVES] + N_PIECES + p);
    }
    for (int a = 0; a < B->n_align; a++) {
        int who = P->leader[a], at = turned ? L->half_align[a] : a;
        CONST_ON(off[O_LEADERS] + at * 3 + (who < 0 ? 2 : who == me ? 0 : 1));
    }
    int mine = P->score[me], theirs = P->score[them];
    CONST_ON(off[O_SCORE] + mine);
    CONST_ON(off[O_SCORE] + B->n_align + 1 + theirs);
    if (mine >= SEVEN) CONST_ON(off[O_SEVEN]);
    if (theirs >= SEVEN) CONST_ON(off[O_SEVEN] + 1);
    if (P->passes) CONST_ON(off[O_PASSED]);
    if (P->turn == me) CONST_ON(off[O_TURN]);
    if (me == 1 && !turned) CONST_ON(off[O_TURN] + 1);
#undef CONST_ON
}

static void view_planar_one(const BatchObject *self, const ViewLayout *L, const Pos *P, int me, int turned,
                            float *planes)
{
    uint32_t bits[VIEW_MAX_CHANNELS];
    view_planar_bits(self, L, P, me, turned, bits);
    for (int ch = 0; ch < L->channels; ch++) view_store_plane(planes + (size_t)ch * L->hw, bits[ch], L->hw);
}

/* The legal mask of P (batch_mask_one's), its cells turned by the half turn when `turned`. */
static void view_mask_one(const Board *B, const ViewLayout *L, const Pos *P, int turned, int8_t *mask)
{
    memset(mask, 0, (size_t)(B->pass_code + 1));
    if (P->outcome != NO_OUTCOME) return;
    int any = 0;
    uint32_t r = P->reserve[(int)P->turn];
    while (r) {
        int p = __builtin_ctz(r);
        r &= r - 1;
        uint32_t cells = piece_cells(B, P, p);
        any |= cells != 0;
        while (cells) {
            int c = __builtin_ctz(cells);
            cells &= cells - 1;
            mask[p * B->n_cells + (turned ? L->half_cell[c] : c)] = 1;
        }
    }
    if (!any) mask[B->pass_code] = 1;
}

/* ---- compact observations and threads (issue 35) ---- */
/* batch_views also writes compact observations: when `out` is a uint8 or bool array (format 'B', 'b' or
   '?') each value is one byte, 0 or 1, the same values as the float32 ones (a quarter of the memory: 5,376
   bytes a position for the planes instead of 21,504).  The masks may be int8, uint8 or bool.  Everything
   after the arguments are checked is plain C on the engine's positions and the buffers, so it runs without
   the GIL: other Python threads go on meanwhile, and envs/vector.py splits a large batch over several
   Python threads (num_threads), each calling batch_views on its slice (POSIX threads here would raise the
   wheels' glibc floor from 2.17 to 2.34, where pthread_create moved into libc).  The caller must not push
   to or reset the engine from another thread during the call: batch_views only reads the positions, but
   a concurrent push would make them inconsistent. */

#define VIEW_NOGIL_MIN 32 /* smaller calls keep the GIL: releasing it costs more than the work */
#define VIEW_MAX_FLAT (MAXC * OBS_LEVELS * OBS_LEVEL_WIDTH + MAXC + 2 * N_PIECES + 3 * MAXA + 2 * (MAXA + 1) + 2 + \
                       N_PIECES + MAXC + 1 + 2)

/* The eight bytes (0 or 1) of a byte of a plane's bits: bit i -> byte i (little-endian), built at import. */
static uint64_t view_byte_spread[256];

static void view_bytes_init(void)
{
    for (int b = 0; b < 256; b++) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            if (b >> i & 1) v |= (uint64_t)1 << (8 * i);
        view_byte_spread[b] = v;
    }
}

/* One plane of hw bytes (<= 32): 1 where `bits` has a 1, else 0. */
static inline void view_store_plane_u8(uint8_t *dst, uint32_t bits, int hw)
{
    int j = 0;
    for (; j + 8 <= hw; j += 8) {
        uint64_t v = view_byte_spread[bits >> j & 255];
        memcpy(dst + j, &v, 8);
    }
    if (j + 4 <= hw) { /* the standard grid's last four places */
        uint32_t v = (uint32_t)view_byte_spread[bits >> j & 15];
        memcpy(dst + j, &v, 4);
        j += 4;
    }
    for (; j < hw; j++) dst[j] = (uint8_t)(bits >> j & 1);
}

typedef struct {
    const BatchObject *self;
    const ViewLayout *L;
    const int64_t *games, *sides;
    void *obs;      /* float32 or bytes, len(games) x L->obs_len */
    uint8_t *masks; /* NULL: none */
    int bytes;      /* obs is one byte a value */
    Py_ssize_t k;
} ViewJob;

static void view_job_run(const ViewJob *J)
{
    const BatchObject *self = J->self;
    const ViewLayout *L = J->L;
    const Board *B = &self->board->b;
    int n_act = B->pass_code + 1;
    for (Py_ssize_t i = 0; i < J->k; i++) {
        const Pos *P = &self->pos[J->games[i]];
        int me = (int)J->sides[i], turned = L->canonical && me == 1;
        if (!J->bytes) {
            float *obs = (float *)J->obs + i * L->obs_len;
            if (L->planar) view_planar_one(self, L, P, me, turned, obs);
            else view_flat_one(self, L, P, me, turned, obs);
        } else {
            uint8_t *obs = (uint8_t *)J->obs + i * L->obs_len;
            if (L->planar) {
                uint32_t bits[VIEW_MAX_CHANNELS];
                view_planar_bits(self, L, P, me, turned, bits);
                /* most planes are all zeros (the constant ones of absent pieces, scores, leaders ...): one memset,
                   then the others */
                memset(obs, 0, (size_t)L->obs_len);
                for (int ch = 0; ch < L->channels; ch++)
                    if (bits[ch]) view_store_plane_u8(obs + (size_t)ch * L->hw, bits[ch], L->hw);
            } else {
                float flat[VIEW_MAX_FLAT];
                view_flat_one(self, L, P, me, turned, flat);
                for (int f = 0; f < L->obs_len; f++) obs[f] = (uint8_t)(flat[f] != 0.0f);
            }
        }
        if (J->masks) view_mask_one(B, L, P, turned, (int8_t *)(J->masks + i * n_act));
    }
#if VIEW_STREAM
    _mm_sfence(); /* the streamed stores are done before the caller reads the planes */
#endif
}

/* The observations' buffer: float32 (*bytes = 0) or one byte a value (*bytes = 1), `want` values. */
static int view_out_buffer(PyObject *obj, Py_buffer *v, Py_ssize_t want, int *bytes)
{
    if (PyObject_GetBuffer(obj, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "observations: expected a contiguous writable array, got %.80s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    int is_float = v->itemsize == 4 && f[0] == 'f' && f[1] == '\0';
    int is_byte = v->itemsize == 1 && (f[0] == 'B' || f[0] == 'b' || f[0] == '?') && f[1] == '\0';
    if (!is_float && !is_byte) {
        PyErr_Format(PyExc_TypeError,
                     "observations: expected a contiguous float32, uint8 or bool array, got format '%s' (item size %zd)",
                     v->format ? v->format : "B", v->itemsize);
        PyBuffer_Release(v);
        return -1;
    }
    if (v->len / v->itemsize != want) {
        PyErr_Format(PyExc_ValueError, "observations: expected %zd items, got %zd", want, v->len / v->itemsize);
        PyBuffer_Release(v);
        return -1;
    }
    *bytes = is_byte;
    return 0;
}

static PyObject *k_batch_views(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *eo, *go, *so, *oo, *mo, *lo;
    if (!PyArg_ParseTuple(args, "O!OOOOO:batch_views", &BatchType, &eo, &go, &so, &oo, &mo, &lo)) return NULL;
    BatchObject *self = (BatchObject *)eo;
    const Board *B = &self->board->b;
    Py_buffer g, s, o, m, l;
    int have_masks = mo != Py_None, bytes = 0;
    ViewLayout L;
    PyObject *result = NULL;
    if (batch_buffer(lo, &l, 0, 'q', -1, "layout")) return NULL;
    int bad = view_layout(self, &l, &L);
    PyBuffer_Release(&l);
    if (bad) return NULL;
    if (batch_buffer(go, &g, 0, 'q', -1, "games")) return NULL;
    Py_ssize_t k = g.len / 8;
    if (batch_buffer(so, &s, 0, 'q', k, "sides")) goto free_g;
    if (view_out_buffer(oo, &o, k * L.obs_len, &bytes)) goto free_s;
    if (have_masks && batch_buffer(mo, &m, 1, 'b', k * (B->pass_code + 1), "masks")) goto free_o;
    if (!batch_games(self, &g) && !batch_sides(&s)) {
        ViewJob job = {self, &L, (const int64_t *)g.buf, (const int64_t *)s.buf, o.buf,
                       have_masks ? (uint8_t *)m.buf : NULL, bytes, k};
        if (k >= VIEW_NOGIL_MIN) {
            Py_BEGIN_ALLOW_THREADS
            view_job_run(&job);
            Py_END_ALLOW_THREADS
        } else {
            view_job_run(&job);
        }
        result = Py_None;
        Py_INCREF(result);
    }
    if (have_masks) PyBuffer_Release(&m);
free_o:
    PyBuffer_Release(&o);
free_s:
    PyBuffer_Release(&s);
free_g:
    PyBuffer_Release(&g);
    return result;
}
/* ---- end observations ---- */

static PyMethodDef module_methods[] = {
    {"playout", (PyCFunction)(void (*)(void))k_playout, METH_VARARGS | METH_KEYWORDS,
     "playout(state, seed, guided=1, moves=None, defend=False) -> outcome: one random (guided=1) or best-of-k "
     "playout; defend: a side facing the opponent's seven breaks it when it can."},
    {"playouts", (PyCFunction)(void (*)(void))k_playouts, METH_VARARGS | METH_KEYWORDS,
     "playouts(state, n, seed, guided=1, defend=False) -> (south wins, north wins, draws) of n playouts."},
    {"mcts", (PyCFunction)(void (*)(void))k_mcts, METH_VARARGS | METH_KEYWORDS,
     "mcts(state, seed, sims=0, seconds=0, c=0.7, widen=2.0, k=3, tree=None, defend=False, solver=False, "
     "greedy=False, proofs=False) -> (sims, seconds, nodes, [(code, n, w[, proof])]); a Tree of the same position "
     "is continued.  greedy: playouts take the best of all placements; solver: proofs propagate (MCTS-solver); "
     "proofs: each child also says 1 proven won, 0 proven lost, 2 proven drawn, -1 open; net: a Net whose "
     "priors order and bias the search and whose value is mixed with the playouts' (mix) or replaces them (mix=1); "
     "cprior: the weight of the priors (0: no priors, the search's own move order); reroot: a Tree whose root is one or two plies above this position is "
     "continued from that subtree; transpose: a child's winning rate is read from every simulation through its "
     "position (transposition statistics); solve_nodes, solve_pieces: leaves with at most solve_pieces pieces "
     "left are solved within solve_nodes nodes (proofs); solve_after: tried once, at that many visits, not when "
     "made; net_pieces: leaves with at most that many pieces left in the reserves get a playout, not the net; "
     "imb: implicit minimax backups, a child ranked by (1 - imb) * its mean + imb * the minimax of the net's "
     "value below it (needs net; 0: the mean alone); trunc: a leaf's playout stops after that many plies and "
     "the net judges where it stopped (needs net; 0: to the end); vorder: a node's untried moves are ordered by "
     "the net's value of each once it has that many visits (needs net; 0: never)."},
    {"net_features", k_net_features, METH_VARARGS,
     "net_features(state, cells, aligns) -> [index, ...]: the learned evaluator's active features of the position "
     "as its side to move sees it, under the given cell and alignment maps (see players/evalnet.py)."},
    {"solve", (PyCFunction)(void (*)(void))k_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(state, nodes=0, seconds=0, tt_bits=18, table=None, moves=0, line=True) -> ((result, plies) or "
     "(None, None), best code, line codes, [(code, (result, plies) or (None, None)), ...], nodes, seconds): the exact "
     "value of the position for the side to move (result 1/0/-1, plies to the end, -1 for a draw) within the "
     "budget; moves=1 adds every root move's win/draw/loss, moves=2 its exact value."},
    {"alphabeta", (PyCFunction)(void (*)(void))k_alphabeta, METH_VARARGS | METH_KEYWORDS,
     "alphabeta(state, moves, depth=64, nodes=0, seconds=0, width=16, tt_bits=20, table=None) -> "
     "(best code, value, depth completed, nodes, seconds)."},
    {"batch_views", k_batch_views, METH_VARARGS,
     "batch_views(engine, games, sides, out, masks, layout): fill out (float32, or uint8/bool: one byte a value) "
     "with the observations of a BatchEngine's games seen by sides (flat or planar, absolute or canonical, as the "
     "int64 layout says) and masks (int8/uint8/bool, or None) with their legal masks in the same view; without the "
     "GIL for batches of 32 games or more."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef kernel_module = {
    PyModuleDef_HEAD_INIT, "_kernel", "The compiled Jericho rules kernel (see docs/engine.md).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernel(void)
{
    if (PyType_Ready(&BoardType) < 0 || PyType_Ready(&StateType) < 0 || PyType_Ready(&TreeType) < 0 ||
        PyType_Ready(&NetType) < 0 ||
        PyType_Ready(&LegalMovesType) < 0 ||
        PyType_Ready(&BatchType) < 0)
        return NULL;
    recip_init();
    view_bytes_init();
    for (int c = 0; c < MAXC; c++) identity_map[c] = c;
    PyObject *m = PyModule_Create(&kernel_module);
    if (!m) return NULL;
    Py_INCREF(&BoardType);
    Py_INCREF(&StateType);
    Py_INCREF(&TreeType);
    Py_INCREF(&NetType);
    Py_INCREF(&BatchType);
    Py_INCREF(&LegalMovesType);
    if (PyModule_AddObject(m, "Board", (PyObject *)&BoardType) < 0 ||
        PyModule_AddObject(m, "Tree", (PyObject *)&TreeType) < 0 ||
        PyModule_AddObject(m, "Net", (PyObject *)&NetType) < 0 ||
        PyModule_AddObject(m, "State", (PyObject *)&StateType) < 0 ||
        PyModule_AddObject(m, "BatchEngine", (PyObject *)&BatchType) < 0 ||
        PyModule_AddObject(m, "LegalMoves", (PyObject *)&LegalMovesType) < 0 ||
        PyModule_AddIntConstant(m, "MAX_CELLS", MAXC) < 0 ||
        PyModule_AddIntConstant(m, "TT_ENTRY_SIZE", (int)sizeof(TTEntry)) < 0 ||
        PyModule_AddIntConstant(m, "SOLVER_ENTRY_SIZE", (int)sizeof(SvEntry)) < 0 ||
        PyModule_AddIntConstant(m, "SOLVER_WIN", SV_WIN) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
