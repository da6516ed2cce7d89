/* test_s3.c - the S3 helpers' pure parts (net/s3.h): s3:// URIs, object URLs and URIs with their
 * encoded keys, region names, redaction, SHA-256 through libcrypto; and rt_s3_put's argument
 * checks and failure on a closed port (no secret in the message), rt_s3_find_region's fallback;
 * S3 error replies' Code and Message (rt_s3_parse_error), read within their length. */
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "net/s3.h"

static void parse_uri(void **state)
{
    (void)state;
    rt_s3_target t;
    memset(&t, 0, sizeof t);
    assert_true(rt_s3_parse_uri("s3://my-bucket/runs/team-a", &t));
    assert_string_equal(t.bucket, "my-bucket");
    assert_string_equal(t.prefix, "runs/team-a");
    assert_true(rt_s3_parse_uri("s3://b.x/", &t));
    assert_string_equal(t.bucket, "b.x");
    assert_string_equal(t.prefix, "");
    assert_true(rt_s3_parse_uri("s3://bkt", &t));
    assert_string_equal(t.prefix, "");
    assert_true(rt_s3_parse_uri("s3://bkt//deep/er//", &t));
    assert_string_equal(t.prefix, "deep/er");
    const char *bad[] = {"", "s3://", "s3:///prefix", "http://bkt/x", "S4://bkt", "s3://bk t/x", "s3://bkt?x=1",
                         "s3:/bkt/x", "s3://b%41/x"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++)
        assert_false(rt_s3_parse_uri(bad[i], &t));
    assert_false(rt_s3_parse_uri(NULL, &t));
    char big[2048] = "s3://bkt/";
    memset(big + 9, 'p', 1500);
    assert_false(rt_s3_parse_uri(big, &t)); /* prefix does not fit */
    memset(big + 5, 'b', 600);
    big[605] = '\0';
    assert_false(rt_s3_parse_uri(big, &t)); /* bucket does not fit */
}

static void object_urls(void **state)
{
    (void)state;
    rt_s3_target t;
    memset(&t, 0, sizeof t);
    assert_true(rt_s3_parse_uri("s3://bkt/pre fix/x", &t));
    char url[512];
    /* virtual-hosted, region unknown, then known */
    assert_true(rt_s3_object_url(&t, "run-1/000000.csv.gz", url, sizeof url));
    assert_string_equal(url, "https://bkt.s3.amazonaws.com/pre%20fix/x/run-1/000000.csv.gz");
    snprintf(t.region, sizeof t.region, "eu-west-1");
    assert_true(rt_s3_object_url(&t, "run-1/000000.csv.gz", url, sizeof url));
    assert_string_equal(url, "https://bkt.s3.eu-west-1.amazonaws.com/pre%20fix/x/run-1/000000.csv.gz");
    /* path style, the endpoint's trailing slashes dropped; every segment encoded, slashes kept */
    snprintf(t.endpoint, sizeof t.endpoint, "http://127.0.0.1:9000//");
    assert_true(rt_s3_object_url(&t, "a+b=c/ü~_.-/%2F", url, sizeof url));
    assert_string_equal(url, "http://127.0.0.1:9000/bkt/pre%20fix/x/a%2Bb%3Dc/%C3%BC~_.-/%252F");
    /* no prefix */
    t.prefix[0] = '\0';
    assert_true(rt_s3_object_url(&t, "k", url, sizeof url));
    assert_string_equal(url, "http://127.0.0.1:9000/bkt/k");
    char uri[256];
    assert_true(rt_s3_object_uri(&t, "r/000001.csv.gz", uri, sizeof uri));
    assert_string_equal(uri, "s3://bkt/r/000001.csv.gz");
    snprintf(t.prefix, sizeof t.prefix, "p/q");
    assert_true(rt_s3_object_uri(&t, "r/000001.csv.gz", uri, sizeof uri));
    assert_string_equal(uri, "s3://bkt/p/q/r/000001.csv.gz");
    /* does not fit, no key */
    assert_false(rt_s3_object_url(&t, "k", url, 20));
    assert_string_equal(url, "");
    assert_false(rt_s3_object_url(&t, "", url, sizeof url));
    assert_false(rt_s3_object_url(&t, NULL, url, sizeof url));
    assert_false(rt_s3_object_uri(&t, "k", uri, 10));
    assert_string_equal(uri, "");
    char huge[1500];
    memset(huge, 'k', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    assert_false(rt_s3_object_url(&t, huge, url, sizeof url)); /* one segment longer than the encoder takes */
}

static void regions_and_redaction(void **state)
{
    (void)state;
    assert_true(rt_s3_valid_region("eu-central-1"));
    assert_true(rt_s3_valid_region("us-gov-west-1"));
    assert_false(rt_s3_valid_region(""));
    assert_false(rt_s3_valid_region(NULL));
    assert_false(rt_s3_valid_region("EU-central-1"));
    assert_false(rt_s3_valid_region("eu central"));
    assert_false(rt_s3_valid_region("a\r\nX-Evil: 1"));
    char long_region[80];
    memset(long_region, 'a', sizeof long_region - 1);
    long_region[sizeof long_region - 1] = '\0';
    assert_false(rt_s3_valid_region(long_region));

    char text[256] = "token=SeCrEt-ToKeN-123456 and again SeCrEt-ToKeN-123456!";
    rt_redact(text, "SeCrEt-ToKeN-123456");
    assert_string_equal(text, "token=[redacted] and again [redacted]!");
    char shorter[64] = "k=abc;abc";
    rt_redact(shorter, "abc");
    assert_null(strstr(shorter, "abc"));
    rt_redact(shorter, "");
    rt_redact(shorter, NULL);
    rt_redact(NULL, "x");
}

static void sha256(void **state)
{
    (void)state;
    char hex[65], err[256];
    assert_int_equal(rt_s3_sha256_hex("", 0, hex, err, sizeof err), RT_OK);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_int_equal(rt_s3_sha256_hex(NULL, 0, hex, err, sizeof err), RT_OK);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_int_equal(rt_s3_sha256_hex("abc", 3, hex, err, sizeof err), RT_OK);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_int_equal(rt_s3_sha256_hex(two, strlen(two), hex, err, sizeof err), RT_OK);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* A local TCP port that nothing listens on (bound, then closed). */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void put_failures(void **state)
{
    (void)state;
    static rt_s3_target t;
    static rt_s3_credentials c;
    assert_true(rt_s3_parse_uri("s3://bkt/p", &t));
    snprintf(t.endpoint, sizeof t.endpoint, "http://127.0.0.1:%d", closed_port());
    snprintf(c.access_key, sizeof c.access_key, "AKIDEXAMPLE");
    snprintf(c.secret_key, sizeof c.secret_key, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    snprintf(c.session_token, sizeof c.session_token, "FwoGZXIvYXdzEXAMPLETOKEN");
    long status = -1;
    char err[512];
    rt_error rc = rt_s3_put(&t, &c, "r/000000.csv.gz", "x", 1, "application/gzip", 5, &status, err, sizeof err);
    assert_int_equal(rc, RT_ERR_IO);
    assert_int_equal(status, -1); /* refused: the request never left, nothing can have been stored */
    assert_non_null(strstr(err, "PUT http://127.0.0.1:"));
    assert_null(strstr(err, c.secret_key));
    assert_null(strstr(err, c.session_token));
    /* arguments */
    assert_int_equal(rt_s3_put(&t, &c, "", "x", 1, NULL, 5, &status, err, sizeof err), RT_ERR_INVALID);
    assert_int_equal(rt_s3_put(&t, &c, "k", NULL, 1, NULL, 5, &status, err, sizeof err), RT_ERR_INVALID);
    assert_int_equal(rt_s3_put(NULL, &c, "k", "x", 1, NULL, 5, &status, err, sizeof err), RT_ERR_INVALID);
    snprintf(t.region, sizeof t.region, "Bad Region");
    assert_int_equal(rt_s3_put(&t, &c, "k", "x", 1, NULL, 5, &status, err, sizeof err), RT_ERR_INVALID);
    t.region[0] = '\0';
    c.secret_key[0] = '\0';
    assert_int_equal(rt_s3_put(&t, &c, "k", "x", 1, NULL, 5, &status, err, sizeof err), RT_ERR_INVALID);
    assert_string_equal(err, "S3 PUT: invalid target, key or credentials");

    /* the region: nobody answers, so the fallback; a known one is kept */
    rt_s3_find_region(&t, &c, 2);
    assert_string_equal(t.region, "eu-central-1");
    snprintf(t.region, sizeof t.region, "ap-south-1");
    rt_s3_find_region(&t, &c, 2);
    assert_string_equal(t.region, "ap-south-1");
}

/* rt_s3_parse_error on the first len bytes of s, copied to a buffer of exactly len bytes (under
 * ASan a read past them is a failure). */
static bool parse_error(const char *s, size_t len, char *code, size_t ccap, char *msg, size_t mcap)
{
    char *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    memcpy(buf, s, len);
    memset(code, 'x', ccap);
    memset(msg, 'x', mcap);
    bool ok = rt_s3_parse_error(buf, len, code, ccap, msg, mcap);
    free(buf);
    return ok;
}

static void error_replies(void **state)
{
    (void)state;
    char code[32], msg[64];
    const char *aws = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>"
                      "<Message>Access Denied</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>";
    assert_true(parse_error(aws, strlen(aws), code, sizeof code, msg, sizeof msg));
    assert_string_equal(code, "AccessDenied");
    assert_string_equal(msg, "Access Denied");
    /* entities decoded, line breaks and other control bytes a space, a NUL inside too */
    const char *ent = "<Error><Message>a &lt;b&gt; &amp;&quot;c&apos;\r\n\td\0e &bogus; &amp</Message></Error>";
    size_t entlen = strlen(ent) + 1 + strlen(ent + strlen(ent) + 1);
    assert_true(parse_error(ent, entlen, code, sizeof code, msg, sizeof msg));
    assert_string_equal(code, "");
    assert_string_equal(msg, "a <b> &\"c'   d e &bogus; &amp");
    /* truncated to fit: the tag cut anywhere before its end gives nothing */
    const char *full = "<Code>SlowDown</Code>";
    for (size_t l = 0; l < strlen(full); l++) {
        assert_false(parse_error(full, l, code, sizeof code, msg, sizeof msg));
        assert_string_equal(code, "");
        assert_string_equal(msg, "");
    }
    assert_true(parse_error(full, strlen(full), code, sizeof code, msg, sizeof msg));
    assert_string_equal(code, "SlowDown");
    /* no close tag, close before open, wrong case, empty, nothing */
    const char *none[] = {"<Code>NoSuchBucket", "</Code>x<Code>", "<code>x</code>", "<Code >x</Code >", "", "<", "<Code",
                          "&amp;"};
    for (size_t i = 0; i < RT_ARRAY_LEN(none); i++) {
        assert_false(parse_error(none[i], strlen(none[i]), code, sizeof code, msg, sizeof msg));
        assert_string_equal(code, "");
    }
    assert_true(parse_error("<Code></Code>", 13, code, sizeof code, msg, sizeof msg));
    assert_string_equal(code, "");
    /* nested or repeated: the first open tag to the first close tag after it */
    const char *nest = "<Code><Code>In</Code></Code><Code>Second</Code>";
    assert_true(parse_error(nest, strlen(nest), code, sizeof code, msg, sizeof msg));
    assert_string_equal(code, "<Code>In");
    /* an entity cut by the close tag is not decoded past it */
    assert_true(parse_error("<Code>&am</Code>p;", 18, code, sizeof code, msg, sizeof msg));
    assert_string_equal(code, "&am");
    /* huge: a message of 1 MiB truncated to msg, the cap of 1 gives "" */
    size_t big = 1u << 20;
    char *h = malloc(big + 64);
    assert_non_null(h);
    int o = snprintf(h, 64, "<Error><Code>InternalError</Code><Message>");
    memset(h + o, 'm', big);
    memcpy(h + o + big, "</Message>", 10);
    assert_true(parse_error(h, (size_t)o + big + 10, code, sizeof code, msg, sizeof msg));
    assert_string_equal(code, "InternalError");
    assert_int_equal(strlen(msg), sizeof msg - 1);
    assert_true(parse_error(h, (size_t)o + big + 10, code, 1, msg, 1));
    assert_string_equal(code, "");
    assert_string_equal(msg, "");
    assert_true(parse_error(h, (size_t)o + big, code, sizeof code, msg, sizeof msg)); /* no </Message> */
    assert_string_equal(code, "InternalError");
    assert_string_equal(msg, "");
    free(h);
    assert_false(rt_s3_parse_error(NULL, 0, code, sizeof code, msg, sizeof msg));
    assert_string_equal(code, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_uri), cmocka_unit_test(object_urls), cmocka_unit_test(regions_and_redaction),
        cmocka_unit_test(sha256),    cmocka_unit_test(put_failures), cmocka_unit_test(error_replies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
