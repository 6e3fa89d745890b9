/* The per-server pools (core/pool.h), without a store. */
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "unit.h"

/* A core with the default pool and one server's key, a.test. */
static time_t one_server(struct key *k)
{
    core_setup(8, 1024, NULL);
    make_key(k, KEY_OPENSSL_CLIENT, "a.test");
    return time(NULL);
}

/* A core with the default pool and two servers' keys, a.test and b.test. */
static time_t two_servers(struct key *k1, struct key *k2)
{
    core_setup(8, 1024, NULL);
    make_key(k1, KEY_OPENSSL_CLIENT, "a.test");
    make_key(k2, KEY_OPENSSL_CLIENT, "b.test");
    return time(NULL);
}

TEST(pool_take_empty)
{
    struct key k;
    struct pooled out;
    core_setup(8, 1024, NULL);
    make_key(&k, KEY_OPENSSL_CLIENT, "a.test");
    pool_take(&k, time(NULL), &out);
    CHECK(out.sess == NULL);
}

TEST(pool_tls13_single_use)
{
    struct key k;
    struct pooled out;
    time_t now = one_server(&k);
    struct fake_sess *t = fake_new(true, "T1");
    pool_put(&k, pooled_of(t, now), pool_generation());
    pool_take(&k, now, &out);
    CHECK(out.sess == t);
    CHECK(t->refs == 1); /* the taker's alone: it left the pool */
    struct pooled again;
    pool_take(&k, now, &again);
    CHECK(again.sess == NULL);
    drop_taken(&out);
}

TEST(pool_tls13_newest_first)
{
    struct key k;
    struct pooled a, b, c;
    time_t now = one_server(&k);
    pool_put(&k, pooled_of(fake_new(true, "old"), now), pool_generation());
    pool_put(&k, pooled_of(fake_new(true, "new"), now), pool_generation());
    pool_take(&k, now, &a);
    pool_take(&k, now, &b);
    pool_take(&k, now, &c);
    CHECK(ticket_is(&a, "new"));
    CHECK(ticket_is(&b, "old"));
    CHECK(c.sess == NULL);
    drop_taken(&a);
    drop_taken(&b);
}

TEST(pool_tls12_private_copies)
{
    struct key k;
    struct pooled a, b;
    time_t now = one_server(&k);
    struct fake_sess *s = fake_new(false, "S12");
    struct pooled p = pooled_of(s, now);
    p.chain = (struct chain){.ops = &fake_ops, .certs = fake_certs_new("CERT")};
    pool_put(&k, p, pool_generation());
    pool_take(&k, now, &a);
    pool_take(&k, now, &b);
    CHECK(a.sess != NULL && b.sess != NULL);
    CHECK(a.sess != s && b.sess != s && a.sess != b.sess);
    CHECK(fs(&a)->copy_of == s->id && fs(&b)->copy_of == s->id);
    CHECK(a.chain.certs == p.chain.certs && b.chain.certs == p.chain.certs);
    CHECK(s->refs == 1); /* the pool's own, nothing borrowed left behind */
    CHECK(fake_live() == 3);
    /* A copy's fate is not the pool's. */
    fs(&a)->resumable = false;
    drop_taken(&a);
    drop_taken(&b);
    struct pooled c;
    pool_take(&k, now, &c);
    CHECK(c.sess != NULL && fs(&c)->copy_of == s->id);
    drop_taken(&c);
    pool_forget(&k);
}

TEST(pool_return_tls13_goes_back)
{
    struct key k;
    struct pooled a, b;
    time_t now = one_server(&k);
    struct fake_sess *t = fake_new(true, "T");
    pool_put(&k, pooled_of(t, now), pool_generation());
    pool_take(&k, now, &a);
    CHECK(a.sess == t);
    pool_return(&k, a, pool_generation());
    pool_take(&k, now, &b);
    CHECK(b.sess == t);
    drop_taken(&b);
}

TEST(pool_return_tls12_frees_copy)
{
    struct key k;
    struct pooled a;
    time_t now = one_server(&k);
    struct fake_sess *s = fake_new(false, "S");
    pool_put(&k, pooled_of(s, now), pool_generation());
    pool_take(&k, now, &a);
    CHECK(fake_live() == 2);
    pool_return(&k, a, pool_generation());
    CHECK(fake_live() == 1);
    CHECK(s->magic != 0 && s->refs == 1);
    pool_forget(&k);
}

TEST(pool_size_evicts_oldest)
{
    struct key k;
    struct pooled a, b, c;
    time_t now = time(NULL);
    core_setup(2, 1024, NULL);
    make_key(&k, KEY_OPENSSL_CLIENT, "a.test");
    struct fake_sess *first = fake_new(true, "1");
    pool_put(&k, pooled_of(first, now), pool_generation());
    pool_put(&k, pooled_of(fake_new(true, "2"), now), pool_generation());
    pool_put(&k, pooled_of(fake_new(true, "3"), now), pool_generation());
    CHECK(fake_live() == 2); /* the first was freed, not kept */
    pool_take(&k, now, &a);
    pool_take(&k, now, &b);
    pool_take(&k, now, &c);
    CHECK(ticket_is(&a, "3"));
    CHECK(ticket_is(&b, "2"));
    CHECK(c.sess == NULL);
    drop_taken(&a);
    drop_taken(&b);
}

/* Takes that find the pool of a server that gave tickets empty are
 * handshakes more at once than it kept: each raises the capacity by one,
 * so the tickets a burst brings back are kept for the next burst. */
TEST(pool_grows_with_empty_takes)
{
    struct key k;
    struct pooled out[12];
    time_t now = time(NULL);
    core_setup(2, 1024, NULL);
    make_key(&k, KEY_OPENSSL_CLIENT, "a.test");
    pool_put(&k, pooled_of(fake_new(true, "w1"), now), pool_generation());
    pool_put(&k, pooled_of(fake_new(true, "w2"), now), pool_generation());
    for (int i = 0; i < 6; i++)
        pool_take(&k, now, &out[i]);
    CHECK(out[0].sess != NULL && out[1].sess != NULL);
    for (int i = 2; i < 6; i++)
        CHECK(out[i].sess == NULL);
    for (int i = 0; i < 2; i++)
        drop_taken(&out[i]);
    /* four empty takes: room for 2 + 4 */
    char name[16];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof name, "b%d", i);
        pool_put(&k, pooled_of(fake_new(true, name), now), pool_generation());
    }
    CHECK(fake_live() == 6);
    for (int i = 0; i < 7; i++)
        pool_take(&k, now, &out[i]);
    CHECK(ticket_is(&out[0], "b7") && ticket_is(&out[5], "b2"));
    CHECK(out[6].sess == NULL);
    for (int i = 0; i < 6; i++)
        drop_taken(&out[i]);
}

/* One at a time, a server that gives a ticket with each connection never
 * leaves the pool empty: the capacity stays; a server never seen, or one
 * that gave none, is no reason to grow either. */
TEST(pool_grows_not_for_sequential_or_unknown)
{
    struct key k;
    struct pooled out;
    time_t now = time(NULL);
    core_setup(2, 1024, NULL);
    make_key(&k, KEY_OPENSSL_CLIENT, "a.test");
    for (int i = 0; i < 5; i++)
        pool_take(&k, now, &out); /* unknown: no pool yet */
    pool_put(&k, pooled_of(fake_new(true, "t0"), now), pool_generation());
    char name[16];
    for (int i = 1; i < 6; i++) {
        pool_take(&k, now, &out);
        CHECK(out.sess != NULL);
        drop_taken(&out);
        snprintf(name, sizeof name, "t%d", i);
        pool_put(&k, pooled_of(fake_new(true, name), now), pool_generation());
    }
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "u%d", i);
        pool_put(&k, pooled_of(fake_new(true, name), now), pool_generation());
    }
    CHECK(fake_live() == 2);
    for (int i = 0; i < 2; i++) {
        pool_take(&k, now, &out);
        drop_taken(&out);
    }
}

/* At most POOL_MAX, however many handshakes find it empty. */
TEST(pool_grows_to_pool_max)
{
    struct key k;
    struct pooled out;
    time_t now = one_server(&k);
    pool_put(&k, pooled_of(fake_new(true, "w"), now), pool_generation());
    pool_take(&k, now, &out);
    drop_taken(&out);
    for (int i = 0; i < 3 * POOL_MAX; i++)
        pool_take(&k, now, &out);
    char name[16];
    for (int i = 0; i < POOL_MAX + 10; i++) {
        snprintf(name, sizeof name, "m%d", i);
        pool_put(&k, pooled_of(fake_new(true, name), now), pool_generation());
    }
    CHECK(fake_live() == POOL_MAX);
    for (int i = 0; i < POOL_MAX; i++) {
        pool_take(&k, now, &out);
        CHECK(out.sess != NULL);
        drop_taken(&out);
    }
}

TEST(pool_size_one_keeps_one)
{
    struct key k;
    struct pooled a, b;
    time_t now = time(NULL);
    core_setup(1, 1024, NULL);
    make_key(&k, KEY_OPENSSL_CLIENT, "a.test");
    pool_put(&k, pooled_of(fake_new(true, "1"), now), pool_generation());
    pool_put(&k, pooled_of(fake_new(true, "2"), now), pool_generation());
    CHECK(fake_live() == 1);
    pool_take(&k, now, &a);
    pool_take(&k, now, &b);
    CHECK(ticket_is(&a, "2"));
    CHECK(b.sess == NULL);
    drop_taken(&a);
}

TEST(pool_max_hosts_evicts_lru)
{
    struct key ka, kb, kc;
    struct pooled out;
    time_t now = time(NULL);
    core_setup(8, 2, NULL);
    make_key(&ka, KEY_OPENSSL_CLIENT, "a.test");
    make_key(&kb, KEY_OPENSSL_CLIENT, "b.test");
    make_key(&kc, KEY_OPENSSL_CLIENT, "c.test");
    pool_put(&ka, pooled_of(fake_new(false, "A"), now), pool_generation());
    pool_put(&kb, pooled_of(fake_new(true, "B"), now), pool_generation());
    /* a.test used again: b.test becomes the least recently used. */
    pool_take(&ka, now, &out);
    CHECK(ticket_is(&out, "A"));
    drop_taken(&out);
    pool_put(&kc, pooled_of(fake_new(true, "C"), now), pool_generation());
    CHECK(fake_live() == 2); /* B freed with its server */
    pool_take(&kb, now, &out);
    CHECK(out.sess == NULL);
    pool_take(&ka, now, &out);
    CHECK(ticket_is(&out, "A"));
    drop_taken(&out);
    pool_take(&kc, now, &out);
    CHECK(ticket_is(&out, "C"));
    drop_taken(&out);
    pool_forget(&ka);
}

TEST(pool_expired_not_offered)
{
    struct key k;
    struct pooled out;
    time_t now = one_server(&k);
    struct pooled p = pooled_of(fake_new(true, "fresh"), now);
    pool_put(&k, p, pool_generation());
    p = pooled_of(fake_new(true, "stale"), now);
    p.expires = now + 5;
    pool_put(&k, p, pool_generation());
    p = pooled_of(fake_new(false, "old12"), now);
    p.expires = now + 5;
    pool_put(&k, p, pool_generation());
    /* At now + 5 the newest ticket expires (expires <= now): skipped, freed. */
    pool_take(&k, now + 5, &out);
    CHECK(ticket_is(&out, "fresh"));
    CHECK(fake_live() == 2);
    drop_taken(&out);
    pool_take(&k, now + 5, &out);
    CHECK(out.sess == NULL);
    CHECK(fake_live() == 0); /* the TLS 1.2 session went too */
}

TEST(pool_not_resumable_not_offered)
{
    struct key k;
    struct pooled out;
    time_t now = one_server(&k);
    struct fake_sess *t = fake_new(true, "T"), *s = fake_new(false, "S");
    pool_put(&k, pooled_of(s, now), pool_generation());
    pool_put(&k, pooled_of(t, now), pool_generation());
    t->resumable = false;
    s->resumable = false;
    pool_take(&k, now, &out);
    CHECK(out.sess == NULL);
    CHECK(fake_live() == 0);
}

TEST(pool_put_stale_generation_dropped)
{
    struct key k;
    struct pooled out;
    time_t now = one_server(&k);
    pool_put(&k, pooled_of(fake_new(true, "T"), now), pool_generation() + 1);
    CHECK(fake_live() == 0);
    pool_take(&k, now, &out);
    CHECK(out.sess == NULL);
}

/* In the child of a fork: the parent's TLS 1.3 tickets are not offered
 * (the parent may offer them too), TLS 1.2 sessions are, and a session from
 * a connection of the parent's generation is dropped. */
struct fork_case {
    struct key k;
    unsigned gen;
    time_t now;
};

static bool child_side(void *arg)
{
    struct fork_case *c = arg;
    struct pooled out;
    bool ok = pool_generation() != c->gen;
    pool_take(&c->k, c->now, &out);
    ok = ok && ticket_is(&out, "S12") && fs(&out)->copy_of != 0;
    drop_taken(&out);
    pool_take(&c->k, c->now, &out);
    ok = ok && ticket_is(&out, "S12"); /* no 1.3 ticket came first */
    drop_taken(&out);
    pool_put(&c->k, pooled_of(fake_new(true, "late"), c->now), c->gen);
    pool_take(&c->k, c->now, &out);
    ok = ok && ticket_is(&out, "S12");
    drop_taken(&out);
    pool_forget(&c->k);
    /* The buried tickets are freed by the next pool call. */
    pool_take(&c->k, c->now, &out);
    ok = ok && out.sess == NULL && fake_live() == 0 && fake_errors() == 0;
    return ok;
}

TEST(pool_fork_child_gives_up_tls13)
{
    static struct fork_case c;
    struct pooled out;
    c.now = time(NULL);
    core_setup(8, 1024, NULL);
    make_key(&c.k, KEY_OPENSSL_CLIENT, "a.test");
    c.gen = pool_generation();
    pool_put(&c.k, pooled_of(fake_new(false, "S12"), c.now), c.gen);
    pool_put(&c.k, pooled_of(fake_new(true, "T13"), c.now), c.gen);
    CHECK(in_child(child_side, &c));
    /* The parent still has its pooled ticket, but a connection open across
     * the fork is the child's too: what it brings now is dropped. */
    CHECK(pool_generation() != c.gen);
    pool_put(&c.k, pooled_of(fake_new(true, "open"), c.now), c.gen);
    pool_take(&c.k, c.now, &out);
    CHECK(ticket_is(&out, "T13"));
    drop_taken(&out);
    pool_take(&c.k, c.now, &out);
    CHECK(ticket_is(&out, "S12"));
    drop_taken(&out);
    pool_forget(&c.k);
}

static bool offered(const struct key *k, time_t now)
{
    struct pooled out;
    pool_take(k, now, &out);
    bool got = out.sess != NULL;
    drop_taken(&out);
    return got;
}

TEST(pool_verdict_backoff)
{
    struct key k;
    time_t now = one_server(&k);
    /* A TLS 1.2 session stays: every take offers unless told to skip. */
    pool_put(&k, pooled_of(fake_new(false, "S"), now), pool_generation());
    pool_verdict(&k, false);
    pool_verdict(&k, false);
    CHECK(offered(&k, now)); /* two refusals: no pause yet */
    pool_verdict(&k, false);
    /* Three in a row: 2 connections without an offer, then one probes. */
    CHECK(!offered(&k, now));
    CHECK(!offered(&k, now));
    CHECK(offered(&k, now));
    pool_verdict(&k, false);
    for (int i = 0; i < 4; i++)
        CHECK(!offered(&k, now)); /* four: twice as long */
    CHECK(offered(&k, now));
    /* A resumption ends it: the next refusal is a first one. */
    pool_verdict(&k, true);
    pool_verdict(&k, false);
    CHECK(offered(&k, now));
    pool_forget(&k);
}

TEST(pool_verdict_pause_caps_at_64)
{
    struct key k;
    time_t now = one_server(&k);
    pool_put(&k, pooled_of(fake_new(false, "S"), now), pool_generation());
    for (int i = 0; i < 20; i++)
        pool_verdict(&k, false);
    for (int i = 0; i < 64; i++)
        CHECK(!offered(&k, now));
    CHECK(offered(&k, now));
    pool_forget(&k);
}

TEST(ledger_disown_everywhere)
{
    struct key k1, k2;
    struct pooled out;
    time_t now = two_servers(&k1, &k2);
    pool_put(&k1, pooled_of(fake_new(true, "U"), now), pool_generation());
    pool_put(&k1, pooled_of(fake_new(true, "T"), now), pool_generation());
    pool_put(&k2, pooled_of(fake_new(true, "T"), now), pool_generation());
    /* The application's own object for the ticket, not the pool's. */
    struct fake_sess *mine = fake_new(true, "T");
    ledger_disown(NULL, &fake_ops, mine);
    CHECK(fake_live() == 2); /* mine and U */
    pool_take(&k1, now, &out);
    CHECK(ticket_is(&out, "U"));
    drop_taken(&out);
    pool_take(&k2, now, &out);
    CHECK(out.sess == NULL);
    /* Never again, even from a connection that still holds it. */
    pool_put(&k1, pooled_of(fake_new(true, "T"), now), pool_generation());
    CHECK(fake_live() == 1);
    pool_take(&k1, now, &out);
    CHECK(out.sess == NULL);
    fake_ops.free(mine);
}

TEST(ledger_disown_one_server)
{
    struct key k1, k2;
    struct pooled out;
    time_t now = two_servers(&k1, &k2);
    pool_put(&k1, pooled_of(fake_new(true, "T"), now), pool_generation());
    pool_put(&k2, pooled_of(fake_new(true, "T2"), now), pool_generation());
    struct fake_sess *mine = fake_new(true, "T");
    ledger_disown(&k1, &fake_ops, mine);
    pool_take(&k1, now, &out);
    CHECK(out.sess == NULL);
    pool_take(&k2, now, &out);
    CHECK(ticket_is(&out, "T2"));
    drop_taken(&out);
    fake_ops.free(mine);
}

TEST(pool_forget_drops_server)
{
    struct key k1, k2;
    struct pooled out;
    time_t now = two_servers(&k1, &k2);
    pool_put(&k1, pooled_of(fake_new(true, "T1"), now), pool_generation());
    pool_put(&k1, pooled_of(fake_new(true, "T2"), now), pool_generation());
    pool_put(&k1, pooled_of(fake_new(false, "S"), now), pool_generation());
    pool_put(&k2, pooled_of(fake_new(true, "B"), now), pool_generation());
    pool_forget(&k1);
    CHECK(fake_live() == 1);
    pool_take(&k1, now, &out);
    CHECK(out.sess == NULL);
    pool_take(&k2, now, &out);
    CHECK(ticket_is(&out, "B"));
    drop_taken(&out);
}

TEST(pool_keys_do_not_share)
{
    struct key client, server, other, other_port;
    struct pooled out;
    time_t now = time(NULL);
    core_setup(8, 1024, NULL);
    make_key(&client, KEY_OPENSSL_CLIENT, "a.test");
    make_key(&server, KEY_OPENSSL_SERVER, "a.test");
    make_key(&other, KEY_OPENSSL_CLIENT, "b.test");
    key_begin(&other_port, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_str(&other_port, 'v', "verify-settings");
    key_put_str(&other_port, 'n', "a.test");
    key_put_num(&other_port, 'p', 444);
    key_end(&other_port);
    pool_put(&client, pooled_of(fake_new(false, "S"), now), pool_generation());
    pool_put(&client, pooled_of(fake_new(true, "T"), now), pool_generation());
    pool_take(&server, now, &out);
    CHECK(out.sess == NULL);
    pool_take(&other, now, &out);
    CHECK(out.sess == NULL);
    pool_take(&other_port, now, &out);
    CHECK(out.sess == NULL);
    pool_take(&client, now, &out);
    CHECK(ticket_is(&out, "T"));
    drop_taken(&out);
    pool_forget(&client);
}
