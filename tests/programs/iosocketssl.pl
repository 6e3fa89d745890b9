# N requests with IO::Socket::SSL directly.
# usage: perl iosocketssl.pl HOST PORT N CAFILE [no-staple|must-staple]; prints "ok N".
use strict;
use warnings;
use IO::Socket::SSL;

my ($host, $port, $n, $ca, $staple) = @ARGV;
# IO::Socket::SSL asks for a stapled OCSP response and installs a status
# callback to judge it, unless told not to ("no-staple"); "must-staple"
# also fails a connection that received none.
my %modes = ('no-staple' => SSL_OCSP_NO_STAPLE, 'must-staple' => SSL_OCSP_MUST_STAPLE);
my @ocsp = defined $staple ? (SSL_ocsp_mode => $modes{$staple}) : ();
my $good = 0;
for (1 .. $n) {
    my $s = IO::Socket::SSL->new(PeerHost => $host, PeerPort => $port, SSL_ca_file => $ca,
                                 SSL_verify_mode => SSL_VERIFY_PEER, SSL_hostname => $host,
                                 SSL_verifycn_name => $host, SSL_verifycn_scheme => 'http', @ocsp)
        or next;
    print $s "GET / HTTP/1.0\r\nHost: $host\r\n\r\n";
    my $data = join '', <$s>;
    $good++ if $data =~ /\r\n\r\nok\s*$/;
    $s->close;
}
print "ok $good\n";
exit($good == $n ? 0 : 1);
