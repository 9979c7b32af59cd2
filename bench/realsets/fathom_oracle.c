/*
 * fathom_oracle reads FENs from standard input, one a line, and prints for
 * each the row Fathom's tb_probe_root gives, in the column layout of the
 * shared Syzygy oracle (../shared/syzygy/README.md):
 *
 *   fen  wdl  dtz  best_moves  moves
 *
 * wdl is Fathom's root class at the FEN's clock as -2..2, dtz its unsigned
 * root DTZ, best_moves the move it returns (UCI), moves every entry of its
 * results array as uci:wdl:dtz. A checkmate prints -2 0 - -, a stalemate
 * 0 0 - -. A position Fathom fails on prints "fen<TAB>FAILED" so the caller
 * can count it.
 *
 * It is built against Fathom's own CLI source, whose FEN parser it uses:
 *   cc -std=gnu99 -O2 -DTB_NO_THREADS -I FATHOM/src -I FATHOM/src/apps \
 *      fathom_oracle.c FATHOM/src/tbprobe.c -o fathom_oracle
 */
#define main fathom_cli_main
#include "fathom.c"
#undef main

/* uci writes a move of a results entry or tb_probe_root's answer. */
static void uci(unsigned move, char *s)
{
    static const char promo[] = {0, 'q', 'r', 'b', 'n'};
    unsigned from = TB_GET_FROM(move), to = TB_GET_TO(move);
    unsigned p = TB_GET_PROMOTES(move);
    *s++ = 'a' + file(from);
    *s++ = '1' + rank(from);
    *s++ = 'a' + file(to);
    *s++ = '1' + rank(to);
    if (p != TB_PROMOTES_NONE && p < sizeof promo)
        *s++ = promo[p];
    *s = '\0';
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TABLE-PATH < fens\n", argv[0]);
        return 2;
    }
    tb_init(argv[1]);
    if (TB_LARGEST == 0) {
        fprintf(stderr, "fathom_oracle: no Syzygy tables in %s\n", argv[1]);
        return 1;
    }
    printf("fen\twdl\tdtz\tbest_moves\tmoves\n");
    char line[512];
    unsigned results[TB_MAX_MOVES];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        struct pos pos;
        if (!parse_FEN(&pos, line)) {
            printf("%s\tFAILED\n", line);
            continue;
        }
        unsigned res = tb_probe_root(pos.white, pos.black, pos.kings,
            pos.queens, pos.rooks, pos.bishops, pos.knights, pos.pawns,
            pos.rule50, pos.castling, pos.ep, pos.turn, results);
        if (res == TB_RESULT_FAILED) {
            printf("%s\tFAILED\n", line);
            continue;
        }
        if (res == TB_RESULT_CHECKMATE) {
            printf("%s\t-2\t0\t-\t-\n", line);
            continue;
        }
        if (res == TB_RESULT_STALEMATE) {
            printf("%s\t0\t0\t-\t-\n", line);
            continue;
        }
        char m[8];
        uci(res, m);
        printf("%s\t%d\t%u\t%s\t", line, (int)TB_GET_WDL(res) - 2,
            TB_GET_DTZ(res), m);
        for (unsigned i = 0; results[i] != TB_RESULT_FAILED; i++) {
            uci(results[i], m);
            printf("%s%s:%d:%u", i ? " " : "", m,
                (int)TB_GET_WDL(results[i]) - 2, TB_GET_DTZ(results[i]));
        }
        printf("\n");
    }
    return 0;
}
