# N requests with LWP::UserAgent (a new agent, and connection, each).
# usage: perl lwp.pl HOST PORT N CAFILE; prints "ok N".
use strict;
use warnings;
use LWP::UserAgent;

my ($host, $port, $n, $ca) = @ARGV;
my $good = 0;
for (1 .. $n) {
    my $ua = LWP::UserAgent->new(ssl_opts => { SSL_ca_file => $ca, verify_hostname => 1 },
                                 keep_alive => 0);
    my $r = $ua->get("https://$host:$port/");
    $good++ if $r->is_success && $r->decoded_content =~ /^ok\s*$/;
}
print "ok $good\n";
exit($good == $n ? 0 : 1);
