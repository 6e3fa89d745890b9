# N requests with LWP::UserAgent (a new agent, and connection, each).
# usage: perl lwp.pl HOST PORT N CAFILE [no-staple|must-staple]; prints "ok N".
use strict;
use warnings;
use IO::Socket::SSL qw(SSL_OCSP_NO_STAPLE SSL_OCSP_MUST_STAPLE);
use LWP::UserAgent;

my ($host, $port, $n, $ca, $staple) = @ARGV;
# IO::Socket::SSL asks for a stapled OCSP response and installs a status
# callback to judge it, unless told not to ("no-staple"); "must-staple"
# also fails a connection that received none.
my %modes = ('no-staple' => SSL_OCSP_NO_STAPLE, 'must-staple' => SSL_OCSP_MUST_STAPLE);
my @ocsp = defined $staple ? (SSL_ocsp_mode => $modes{$staple}) : ();
my $good = 0;
for (1 .. $n) {
    my $ua = LWP::UserAgent->new(ssl_opts => { SSL_ca_file => $ca, verify_hostname => 1, @ocsp },
                                 keep_alive => 0);
    my $r = $ua->get("https://$host:$port/");
    $good++ if $r->is_success && $r->decoded_content =~ /^ok\s*$/;
}
print "ok $good\n";
exit($good == $n ? 0 : 1);
