/* info.c - where the tool runs: the host's facts and the cloud discovery as the environment asks
 * (cli_read_host, cli_start_cloud, also used while tracking), and the info subcommand, which
 * prints both as aligned "key  value" lines in sections (host, CPU, memory, GPUs, storage,
 * cloud), or with --json as one JSON object. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "settings.h"

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

static const char info_usage[] =
    "Usage: resource-tracker info [--json]\n"
    "\n"
    "Prints the host's facts (hostname, machine id, address, CPU model and vCPUs, memory, GPUs,\n"
    "storage, kernel, OS) and the cloud it runs on, found from the vendors' metadata services\n"
    "(AWS, GCP, Azure, Hetzner, UpCloud, Alibaba Cloud, OVHcloud, Vultr) within 2 s. Text by\n"
    "default: aligned \"key  value\" lines in the sections Host, CPU, Memory, GPUs, Storage and\n"
    "Cloud; a fact the machine does not tell is \"unknown\".\n"
    "\n"
    "Options:\n";
/* --help after its options (cli_settings_help_for writes them from the settings table) */
static const char info_usage_tail[] =
    "\n"
    "Environment: TRACKER_CLOUD_DISCOVERY=0 asks no metadata service (the cloud is unknown);\n"
    "TRACKER_CLOUD_METADATA_URL replaces the services' scheme and host (tests).\n"
    "\n"
    "Exit status: 0 printed; 1 the host's facts could not be read; 2 a usage error.\n";

/* One "key  value" line of the text form: the key padded to one column. */
static void info_line(const char *key, const char *value)
{
    printf("  %-14s %s\n", key, value && *value ? value : "unknown");
}

/* A number with `decimals` decimals and a unit after it; "unknown" for NaN. */
static void info_num(const char *key, double v, int decimals, const char *unit)
{
    char b[128];
    if (isnan(v))
        info_line(key, NULL);
    else {
        snprintf(b, sizeof b, "%.*f %s", decimals, v, unit);
        info_line(key, b);
    }
}

/* The text form: one section per subject, each fact on its own aligned line. */
static void info_text(const rt_host *h, const rt_cloud *c)
{
    char b[128];
    puts("Host");
    info_line("hostname", h->hostname);
    info_line("machine id", h->host_id);
    info_line("address", h->ip);
    info_line("kernel", h->kernel);
    info_line("OS", h->os);
    puts("CPU");
    info_line("model", h->cpu_model);
    if (h->vcpus == RT_NULL_I64)
        info_line("vCPUs", NULL);
    else {
        snprintf(b, sizeof b, "%lld", (long long)h->vcpus);
        info_line("vCPUs", b);
    }
    puts("Memory");
    info_num("total", isnan(h->memory_mib) ? NAN : h->memory_mib / 1024, 1, "GiB");
    puts("GPUs");
    if (h->gpu_count == RT_NULL_I64 || h->gpu_count <= 0)
        info_line("count", h->gpu_count == RT_NULL_I64 ? NULL : "0 (none found)");
    else {
        snprintf(b, sizeof b, "%lld", (long long)h->gpu_count);
        info_line("count", b);
        info_line("model", h->gpu_model);
        info_num("memory", isnan(h->gpu_memory_mib) ? NAN : h->gpu_memory_mib / 1024, 1, "GiB (all GPUs)");
    }
    puts("Storage");
    info_num("disks", h->storage_gb, 1, "GB (physical disks, 10^9 bytes)");
    puts("Cloud");
    if (!c->vendor_id)
        info_line("vendor", isnan(c->discovery_secs) ? "not asked (TRACKER_CLOUD_DISCOVERY off)" : "none found");
    else {
        info_line("vendor", c->vendor_id);
        info_line("account", c->account_id);
        info_line("region", c->region_id);
        info_line("zone", c->zone_id);
        info_line("instance type", c->instance_type);
    }
    if (!isnan(c->discovery_secs))
        info_num("discovery", c->discovery_secs, 3, "s");
}

/* resource-tracker info [--json]: the host and the cloud as text, or as one JSON object. */
int cli_info_main(cli_options *o)
{
    bool json = false;
    int done = cli_args_switch(o, CMD_INFO, &json, info_usage, info_usage_tail);
    if (done >= 0)
        return done;
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
    int rc = 0;
    if (json) {
        char buf[8192];
        size_t n = rt_format_info(host, cloud ? cloud : &none, buf, sizeof buf);
        if (n >= sizeof buf || fwrite(buf, 1, n, stdout) != n)
            rc = EXIT_FAIL;
    } else {
        info_text(host, cloud ? cloud : &none);
    }
    if (fflush(stdout) != 0)
        rc = EXIT_FAIL;
    rt_host_free(host);
    rt_cloud_free(cd);
    return rc;
}
