# N requests with IO::Socket::SSL directly.
# usage: perl iosocketssl.pl HOST PORT N CAFILE; prints "ok N".
use strict;
use warnings;
use IO::Socket::SSL;

my ($host, $port, $n, $ca) = @ARGV;
my $good = 0;
for (1 .. $n) {
    my $s = IO::Socket::SSL->new(PeerHost => $host, PeerPort => $port, SSL_ca_file => $ca,
                                 SSL_verify_mode => SSL_VERIFY_PEER, SSL_hostname => $host,
                                 SSL_verifycn_name => $host, SSL_verifycn_scheme => 'http')
        or next;
    print $s "GET / HTTP/1.0\r\nHost: $host\r\n\r\n";
    my $data = join '', <$s>;
    $good++ if $data =~ /\r\n\r\nok\s*$/;
    $s->close;
}
print "ok $good\n";
exit($good == $n ? 0 : 1);
