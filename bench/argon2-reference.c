/* Argon2id hashes per second on one thread with bare libargon2, at the server's
 * parameters: the ceiling for password sign-in. Usage: argon2-reference SECONDS M_KIB T P */
#include <argon2.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    uint32_t m = argc > 2 ? atoi(argv[2]) : 19456, t = argc > 3 ? atoi(argv[3]) : 2, p = argc > 4 ? atoi(argv[4]) : 1;
    const char pwd[] = "correct horse battery staple";
    unsigned char salt[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, hash[32];
    long count = 0;
    double start = now(), end = start + (seconds > 0 && seconds < 600 ? seconds : 3);
    while (now() < end) {
        if (argon2id_hash_raw(t, m, p, pwd, sizeof pwd - 1, salt, sizeof salt, hash, sizeof hash) != ARGON2_OK) return 1;
        count++;
    }
    printf("%.2f\n", count / (now() - start));
    return 0;
}
