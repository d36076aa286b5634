'use strict';
// `node --test examples/node/` runs only files named like test.js, test-*.js,
// *.test.js, *-test.js or *_test.js; test_typingd_client.js (named like the Python
// tests) is not one of them, so this file loads it. Running that file directly
// (`node --test examples/node/test_typingd_client.js`) works too.
require('./test_typingd_client.js');
