<?php
// N requests with PHP's curl extension (curl_exec), one connection each.
// PHP 8.2 loads the extension with RTLD_DEEPBIND, so its libcurl calls
// libssl past any preloaded library; 8.4 does not. usage: php curl.php HOST PORT N CAFILE;
// prints "ok N".
[$_, $host, $port, $n, $ca] = $argv;
$good = 0;
for ($i = 0; $i < (int)$n; $i++) {
    $h = curl_init("https://$host:$port/");
    curl_setopt($h, CURLOPT_RETURNTRANSFER, true);
    curl_setopt($h, CURLOPT_CAINFO, $ca);
    curl_setopt($h, CURLOPT_FORBID_REUSE, true);
    $out = curl_exec($h);
    if ($out === false) {
        echo "curl error ", curl_errno($h), "\n";
        exit(1);
    }
    if (trim($out) === "ok")
        $good++;
    curl_close($h);
}
echo "ok $good\n";
exit($good === (int)$n ? 0 : 1);
