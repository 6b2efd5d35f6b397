/* `launcher RSS_FILE PROGRAM [ARGS...]`: runs PROGRAM (stdin, stdout and
 * stderr inherited), writes its peak resident set size in KiB to RSS_FILE
 * and exits with its status (128 + signal number after a signal).
 *
 * Why a launcher: Linux counts in a process's `ru_maxrss` the memory of the
 * image it was forked from, so a program spawned by the `tern` driver would
 * report the driver's size. Forked from this small process instead, the
 * figure is the program's own (plus this launcher's few hundred KiB). */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: launcher RSS_FILE PROGRAM [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("launcher: fork");
        return 2;
    }
    if (pid == 0) {
        execv(argv[2], argv + 2);
        perror("launcher: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) {
        perror("launcher: wait4");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (f) {
        fprintf(f, "%ld\n", ru.ru_maxrss);
        fclose(f);
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}
