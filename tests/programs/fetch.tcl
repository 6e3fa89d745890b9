# N requests with Tcl's http package over the tls package, one connection
# each; tls reads and writes only through an SSL BIO (BIO_read/BIO_write).
# usage: tclsh fetch.tcl HOST PORT N CAFILE; prints "ok N".
package require http
package require tls
lassign $argv host port n ca
http::register https $port [list ::tls::socket -cafile $ca -require 1 -servername $host]
set good 0
for {set i 0} {$i < $n} {incr i} {
    set tok [http::geturl "https://$host:$port/"]
    if {[string trim [http::data $tok]] eq "ok"} { incr good }
    http::cleanup $tok
}
puts "ok $good"
exit [expr {$good == $n ? 0 : 1}]
