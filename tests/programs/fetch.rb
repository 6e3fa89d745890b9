# N requests with Net::HTTP, one connection each.
# usage: ruby fetch.rb HOST PORT N CAFILE; prints "ok N".
require 'net/http'
require 'openssl'

host, port, n, ca = ARGV[0], ARGV[1].to_i, ARGV[2].to_i, ARGV[3]
good = 0
n.times do
  http = Net::HTTP.new(host, port)
  http.use_ssl = true
  http.ca_file = ca
  http.verify_mode = OpenSSL::SSL::VERIFY_PEER
  good += 1 if http.start { |h| h.get('/').body.strip } == 'ok'
end
puts "ok #{good}"
exit(good == n ? 0 : 1)
