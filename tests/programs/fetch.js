// N requests with Node's https module, one connection each; prints "ok N".
// usage: node fetch.js HOST PORT N CAFILE shared|none
//   shared: one Agent, which caches each connection's session and offers
//           it on the next one; none: agent: false (an Agent per request).
'use strict';
const https = require('https');
const fs = require('fs');
const [host, port, n, cafile, mode] = process.argv.slice(2);
const ca = fs.readFileSync(cafile);
const agent = mode === 'shared' ? new https.Agent({ keepAlive: false, maxCachedSessions: 100 }) : false;
let good = 0;
function one(i) {
    if (i === Number(n)) {
        console.log(`ok ${good}`);
        process.exitCode = good === Number(n) ? 0 : 1;
        return;
    }
    const req = https.get({ host, port: Number(port), path: '/', ca, agent,
                            headers: { Connection: 'close' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => { body += d; });
        res.on('end', () => {
            if (body.trim() === 'ok') good++;
            one(i + 1);
        });
    });
    req.on('error', (e) => { console.log(`error ${e.code || e.message}`); process.exitCode = 1; });
}
one(0);
