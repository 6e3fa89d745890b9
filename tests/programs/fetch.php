<?php
// N requests with file_get_contents and an https stream context.
// usage: php fetch.php HOST PORT N CAFILE; prints "ok N".
[$_, $host, $port, $n, $ca] = $argv;
$good = 0;
for ($i = 0; $i < $n; $i++) {
    $ctx = stream_context_create(['ssl' => ['cafile' => $ca, 'verify_peer' => true]]);
    $body = file_get_contents("https://$host:$port/", false, $ctx);
    $good += trim((string)$body) === 'ok';
}
echo "ok $good\n";
exit($good == $n ? 0 : 1);
