<?php
// The first call of a fresh PHP process, for driver.php's cold rows:
//   cold.php CLIENT ADDRESS OPERATION LABEL QUEUE PAYLOAD_JSON
// Times the client's construction and one call, checks the reply, and
// prints the time in ns (and, for register, the new queue's id). The queue
// a send, receive or unregister needs is set up and cleaned up by the
// driver, so this process makes only the one call.

declare(strict_types=1);

require_once __DIR__ . '/runner.php';

[, $name, $address, $operation, $label, $queue, $payload_json] = $argv + array_fill(0, 7, '');
$label = $label === '' ? null : $label;
$class = WSB_CLIENTS[$name][0] ?? null;
if ($class === null || $address === '' || $payload_json === '') {
    fwrite(STDERR, "usage: cold.php CLIENT ADDRESS OPERATION LABEL QUEUE PAYLOAD_JSON\n");
    exit(2);
}
set_exception_handler(function (Throwable $e): void {
    fwrite(STDERR, $e->getMessage() . "\n");
    exit(1);
});
$payloads = wsb_catalogue($payload_json, $label === null ? [] : [$label]);

$start = hrtime(true);
$client = new $class($address);
$constructed = hrtime(true) - $start;
$runner = new WsbRunner($client, $operation, $label, $payloads);  // arguments: not timed
$runner->queue = $queue === '' ? null : $queue;
$start = hrtime(true);
$runner->call();
$elapsed = $constructed + hrtime(true) - $start;

$reply = $runner->reply();
if ($operation === 'register') {
    if (!is_string($reply) || $reply === '') {
        throw new RuntimeException('verification failed: cold reply: no queue id');
    }
    echo "$elapsed $reply\n";
    exit(0);
}
if ($operation === 'send' || $operation === 'unregister') {
    if ($reply !== true) {
        throw new RuntimeException("verification failed: cold reply: $operation not acknowledged");
    }
} else {
    $runner->checkLast('cold reply');
}
echo "$elapsed\n";
