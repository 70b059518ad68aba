/* culeak: who holds this memory? The command-line front end. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/command.h"
#include "engine/multi.h"
#include "report/json.h"
#include "util/version.h"


/* Whether --json is on the command line, whatever else is: a command line that does not parse
 * still gets its error as a JSON object when it asked for JSON. */
static bool asks_json(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--json") == 0)
            return true;
    return false;
}

static int fail(const struct cl_command_line *cli, const struct cl_error *err)
{
    fprintf(stderr, "culeak: error: %s\n", err->msg);
    if (cli->json)
        cl_json_error_document(stdout, err->code, err->msg);
    return err->code;
}

static int run(int argc, char **argv)
{
    struct cl_command_line cli = {.tensor_filter = {.device = -1}, .block_filter = {.device = -1}};
    struct cl_error err = {0};
    /* The command may come first (culeak info --pid 1) or last (culeak --pid 1 info): getopt
     * permutes, so both parse. */
    int rc = cl_command_parse(argc, argv, 1, true, true, &cli, &err);
    if (rc == CL_PARSE_HELP) {
        char usage[CL_USAGE_CAP];
        cl_command_usage(CL_FRONT_CLI, usage, sizeof usage);
        printf(
            "usage: culeak COMMAND (--pid PID | --core FILE [--exe PATH] | --dump FILE) [options]\n"
            "       culeak dump (--pid PID | --core FILE) -o FILE\n"
            "       culeak diff A.json B.json\n\n"
            "Reads a stopped Python + PyTorch process, or its core dump, from the outside.\n\n%s",
            usage);
        return 0;
    }
    if (rc == CL_PARSE_VERSION) {
        printf("culeak %s\n", CL_VERSION);
        return 0;
    }
    if (rc) {
        cli.json = cli.json || asks_json(argc, argv);
        return fail(&cli, &err);
    }
    if (isatty(2) && !cli.quiet)
        cli.walk.progress = stderr;
    const struct cl_command_spec *c = cl_command_find(cli.command);
    if (cl_command_offline(&cli))
        return (rc = cl_command_run_offline(&cli, stdout, &err)) ? fail(&cli, &err) : 0;
    if (c->drive)   /* watch, dump: they open their targets themselves */
        return (rc = c->drive(&cli, stdout, stderr, &err)) ? fail(&cli, &err) : 0;
    if (cl_command_many(&cli)) {
        bool written;
        rc = cl_command_run_targets(&cli, stdout, &written, &err);
        if (rc && written)   /* the reports say it, JSON included: here only the exit status */
            fprintf(stderr, "culeak: error: %s\n", err.msg);
        return rc && !written ? fail(&cli, &err) : rc;
    }
    rc = cl_command_inspect(&cli, stdout, &err);
    return rc ? fail(&cli, &err) : 0;
}

/* A program the kernel starts as core_pattern's helper has standard input only: without this,
 * the first files culeak opens would become descriptors 1 and 2, and its messages would go into
 * the dump. */
static void open_standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
            return;
}

int main(int argc, char **argv)
{
    open_standard_fds();
    int rc = run(argc, argv);
    /* Output cut short (a full disk) must not pass for whole. */
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "culeak: error: cannot write the output: %s\n", strerror(errno));
        if (!rc)
            rc = CL_E_IO;
    }
    return rc;
}
