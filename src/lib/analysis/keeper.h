/* keeper.h - the pure parts of the Spare Cores Keeper lookup (keeper.c): the query it sends and
 * the parsers of its replies, each over a buffer of exactly the bytes received. Internal. */
#ifndef RT_KEEPER_H
#define RT_KEEPER_H

#include "../core/core.h"

/* Servers asked for in one lookup: the cheapest that also passes our own fit check wins. */
#define RT_KEEPER_LIMIT 10
/* Keeper's vcpus_min accepts 1..256: a larger recommendation fits no server it lists. */
#define RT_KEEPER_MAX_VCPUS 256
/* The most reply bytes read (a page of 10 servers is about 50 kB). */
#define RT_KEEPER_MAX_BODY (4u << 20)
#define RT_KEEPER_DEFAULT_URL "https://keeper.sparecores.net"

/* Whether a Keeper URL turns every lookup off ("off", in any case). */
bool rt_keeper_url_off(const char *url);

/* mib as Keeper's GB (GiB: Keeper compares memory_amount >= GB * 1024), written exactly as a
 * decimal ("3", "0.125", "1.5009765625") into buf[cap]. Returns false when it does not fit or
 * mib is negative. */
bool rt_keeper_gb(int64_t mib, char *buf, size_t cap);

/* The /servers query URL for rec under base (a trailing '/' is ignored) into url[cap]: vcpus_min,
 * memory_min, and with GPUs gpu_min, gpu_memory_min (each GPU's memory asked, 0.19) and
 * gpu_memory_total (that times the GPUs; without a per-GPU figure, the tree's VRAM). Returns
 * true, or false when it does not fit or rec asks for nothing Keeper can answer (cpu < 1). */
bool rt_keeper_servers_url(const char *base, const rt_recommendation *rec, char *url, size_t cap);

/* Parses a /servers reply (a JSON list of servers) into *out (its struct_size is not
 * touched): the cheapest entry with an on-demand price that fits rec (vCPUs, memory, GPUs and,
 * when the entry says, total VRAM and (0.19) its smallest GPU's; rec may be NULL: any entry fits). Strings are cut to fit at
 * a UTF-8 boundary (display_name) or the entry is skipped (vendor_id, api_reference: a cut
 * identifier would name another server); control characters become '?'. Returns RT_OK,
 * RT_ERR_NOT_FOUND when no entry fits, RT_ERR_PARSE when the reply is not a JSON list or holds
 * only malformed entries, RT_ERR_INVALID for NULL arguments. */
rt_error rt_keeper_parse_servers(const char *buf, size_t len, const rt_recommendation *rec, rt_server *out);

/* Parses a /server/{vendor}/{type}/prices reply: the lowest on-demand Linux price in USD per
 * hour over the items (only region's when region is not NULL) into *usd_per_hour. Returns
 * RT_OK, RT_ERR_NOT_FOUND when no item qualifies, RT_ERR_PARSE when the reply is not a JSON
 * list, RT_ERR_INVALID for NULL arguments. */
rt_error rt_keeper_parse_prices(const char *buf, size_t len, const char *region, double *usd_per_hour);

#endif
