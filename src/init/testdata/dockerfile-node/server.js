require('node:http').createServer((_, res) => res.end('hello\n')).listen(3000);
