/* info.c - where the tool runs: the host's facts and the cloud discovery as the environment asks
 * (cli_read_host, cli_start_cloud, also used while tracking), and the info subcommand, which
 * prints both as one JSON object. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Starts cloud discovery in the background as the environment asks; NULL when it is turned
 * off or cannot start (the run goes on without it). */
rt_cloud_discovery *cli_start_cloud(const cli_options *o)
{
    rt_cloud_options co = RT_CLOUD_OPTIONS_INIT;
    co.disabled = o->cloud_disabled;
    co.metadata_url = o->cloud_metadata_url;
    co.log = cli_log;
    rt_cloud_discovery *d = NULL;
    rt_error err = rt_cloud_start(&co, &d);
    if (err != RT_OK && err != RT_ERR_DISABLED)
        cli_say("warning: no cloud discovery: %s", rt_strerror(err));
    return d;
}

/* Reads the host's facts with the roots the environment names (rt_host_new's contract). */
rt_error cli_read_host(const cli_options *o, rt_host **out)
{
    rt_host_options ho = RT_HOST_OPTIONS_INIT;
    ho.log = cli_log;
    ho.proc_root = o->proc_root;
    ho.sys_root = o->sys_root;
    ho.nvml_library = o->nvml_library;
    return rt_host_new(&ho, out);
}

/* resource-tracker info: the host and the cloud as one JSON object on stdout. */
int cli_info_main(cli_options *o)
{
    if (o->nsub == 1 && (strcmp(o->sub_args[0], "--help") == 0 || strcmp(o->sub_args[0], "-h") == 0)) {
        fputs("Usage: resource-tracker info\n"
              "The host's facts (CPU model, cores, memory, GPUs, storage) and the cloud it runs on\n"
              "(found from the metadata services within 2 s; TRACKER_CLOUD_DISCOVERY=0: none asked)\n"
              "as one JSON object on stdout.\n",
              stdout);
        return 0;
    }
    if (o->nsub > 0) {
        cli_say("info: unexpected argument '%s' (info takes none)", o->sub_args[0]);
        return EXIT_USAGE;
    }
    rt_cloud_discovery *cd = cli_start_cloud(o); /* runs while the host is read */
    rt_host *host = NULL;
    rt_error err = cli_read_host(o, &host);
    if (err != RT_OK) {
        cli_say("cannot read the host's facts: %s", rt_strerror(err));
        rt_cloud_free(cd);
        return EXIT_FAIL;
    }
    const rt_cloud *cloud = rt_cloud_result(cd, 3.0);
    rt_cloud none = {.discovery_secs = NAN}; /* discovery off: every field null */
    char buf[8192];
    size_t n = rt_format_info(host, cloud ? cloud : &none, buf, sizeof buf);
    int rc = 0;
    if (n >= sizeof buf || fwrite(buf, 1, n, stdout) != n || fflush(stdout) != 0)
        rc = EXIT_FAIL;
    rt_host_free(host);
    rt_cloud_free(cd);
    return rc;
}
