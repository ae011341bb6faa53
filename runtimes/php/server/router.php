<?php
// The wsbench service in PHP, for PHP's built-in server:
//   WSBENCH_PHP_DATA=DIR php -S 127.0.0.1:PORT router.php
// one port for the three protocols, on the native stacks' paths:
//   SOAP     GET /?wsdl, GET /xop.xsd, POST /   SoapServer from the WSDL
//   XML-RPC  POST /RPC2                         xmlrpc_server_create
//   REST     /ping, /payloads/<label>, /echo, /queues[/<id>]   JSON or XML bodies
// ping, get, and the queues (register, send, receive, unregister) on all
// three; echo on REST. DIR (written by driver.php) holds the WSDL and XOP
// schema the gsoap server published, the payloads as PHP files (one per
// catalogue label, from tests/payload_json; OPcache, on by default under
// the built-in server, keeps them compiled) and the queues, as files: a PHP
// request keeps nothing in memory for the next one.

declare(strict_types=1);

require_once __DIR__ . '/../clients.php';
require_once __DIR__ . '/store.php';
require_once __DIR__ . '/../xml_bodies.php';

// Warnings go to the server's log, never into a reply.
ini_set('display_errors', 'stderr');
// SoapServer writes doubles with `precision` significant digits (14 by
// default, which rounds the catalogue's); -1 is the shortest exact form.
ini_set('precision', '-1');

$data = getenv('WSBENCH_PHP_DATA');
if ($data === false || !is_dir($data)) {
    http_response_code(500);
    echo "WSBENCH_PHP_DATA is not a directory\n";
    return true;
}
$store = new WsbStore($data);
$path = (string) parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
$method = $_SERVER['REQUEST_METHOD'];

// The built-in server ends a reply by closing the connection and sends no
// Content-Length of its own: the reply is buffered to say it.
ob_start();
if ($path === '/' || $path === '/xop.xsd') {
    wsb_serve_soap($store, $path, $method);
} elseif ($path === '/RPC2') {
    wsb_serve_xmlrpc($store, $method);
} else {
    wsb_serve_rest($store, $path, $method);
}
header('Content-Length: ' . ob_get_length());
ob_end_flush();
return true;

function wsb_reply(int $status, string $type, string $body): void
{
    http_response_code($status);
    if ($type !== '') {
        header("Content-Type: $type");
    }
    echo $body;
}

function wsb_serve_soap(WsbStore $store, string $path, string $method): void
{
    if ($method === 'GET') {
        if ($path === '/xop.xsd') {
            wsb_reply(200, 'text/xml; charset=utf-8', $store->document('xop.xsd'));
        } elseif (isset($_GET['wsdl'])) {
            // The WSDL as gsoap published it, its endpoint this server.
            wsb_reply(200, 'text/xml; charset=utf-8', preg_replace(
                '/(<SOAP:address location=")[^"]*"/',
                '${1}http://' . $_SERVER['HTTP_HOST'] . '/"', $store->document('wsbench.wsdl')));
        } else {
            wsb_reply(404, 'text/plain', "GET / needs ?wsdl\n");
        }
        return;
    }
    if ($method !== 'POST' || $path !== '/') {
        wsb_reply(405, 'text/plain', "SOAP takes POST /\n");
        return;
    }
    $server = new SoapServer($store->documentPath('wsbench.wsdl'),
        ['cache_wsdl' => WSDL_CACHE_MEMORY, 'features' => SOAP_SINGLE_ELEMENT_ARRAYS]);
    $server->setObject(new WsbSoapService($store));
    $server->handle();
}

/** The WSDL's operations (document/literal: one parameter object each). */
final class WsbSoapService
{
    public function __construct(private WsbStore $store)
    {
    }

    public function ping(): array
    {
        return ['reply' => 'pong'];
    }

    public function get(object $request): array
    {
        $body = $this->store->payload("{$request->kind}/{$request->n}")
            ?? throw new SoapFault('Client', "no payload {$request->kind}/{$request->n} here");
        $kind = array_key_first($body);
        return match ($kind) {
            'ints', 'strings' => [$kind => ['item' => $body[$kind]]],
            'objects' => [$kind => ['object' => $body[$kind]]],
            'message' => SoapRpcClient::messageArgument($body),
            default => throw new SoapFault('Server', "the PHP server does not send $kind"),
        };
    }

    public function RegisterClient(): array
    {
        return ['queue' => $this->store->register()];
    }

    public function SendMessage(object $request): array
    {
        $message = SoapRpcClient::messages((object) ['message' => [$request->message]])[0];
        $this->queueOrFault($this->store->send($request->queue, $message), $request->queue);
        return [];
    }

    public function ReceiveMessage(object $request): array
    {
        $messages = $this->queueOrFault($this->store->receive($request->queue), $request->queue);
        return ['message' => array_map(
            fn (array $m) => SoapRpcClient::messageArgument(['message' => $m]), $messages)];
    }

    public function UnregisterClient(object $request): array
    {
        $this->queueOrFault($this->store->unregister($request->queue), $request->queue);
        return [];
    }

    private function queueOrFault(mixed $result, string $queue): mixed
    {
        return $result ?? throw new SoapFault('Client', "no queue '$queue'");
    }
}

function wsb_serve_xmlrpc(WsbStore $store, string $method): void
{
    if ($method !== 'POST') {
        wsb_reply(405, 'text/plain', "XML-RPC takes POST /RPC2\n");
        return;
    }
    // xmlrpc-epi has no <i8>: 64-bit fields go out as decimal strings,
    // what the native servers send for /RPC2?int64=string, whatever the
    // query says.
    $fault = fn (int $code, string $text) => ['faultCode' => $code, 'faultString' => $text];
    $queue = fn (array $params, callable $then) => is_string($params[0] ?? null)
        ? ($then($params[0]) ?? $fault(404, "no queue '{$params[0]}'"))
        : $fault(400, 'a queue id (string) is required');
    $methods = [
        'wsbench.ping' => fn (array $params) => 'pong',
        'wsbench.get' => fn (array $params) => is_string($params[0] ?? null)
            && ($body = $store->payload($params[0])) !== null
            ? XmlrpcClient::expectedPayload($body)
            : $fault(404, 'no such payload here'),
        'wsbench.registerClient' => fn (array $params) => $store->register(),
        'wsbench.sendMessage' => fn (array $params) => is_array($params[1] ?? null)
            ? $queue($params, fn ($q) => $store->send($q, wsb_message_int64_as_ints($params[1])))
            : $fault(400, 'a message (struct) is required'),
        'wsbench.receiveMessages' => fn (array $params) => $queue($params, function ($q) use ($store) {
            $messages = $store->receive($q);
            return $messages === null ? null
                : ['messages' => array_map('wsb_message_int64_as_strings', $messages)];
        }),
        'wsbench.unregisterClient' => fn (array $params) => $queue($params,
            fn ($q) => $store->unregister($q)),
    ];
    $server = xmlrpc_server_create();
    foreach ($methods as $name => $implementation) {
        xmlrpc_server_register_method($server, $name,
            fn (string $name, array $params) => $implementation($params));
    }
    header('Content-Type: text/xml; charset=utf-8');
    echo xmlrpc_server_call_method($server, file_get_contents('php://input'), null,
        ['encoding' => 'utf-8', 'escaping' => 'markup', 'verbosity' => 'no_white_space']);
    xmlrpc_server_destroy($server);
}

/** A message as XML-RPC clients send it (64-bit fields as <int> or strings). */
function wsb_message_int64_as_ints(array $message): array
{
    $message['timestamp'] = (int) $message['timestamp'];
    foreach ($message['records'] ?? [] as $i => $record) {
        $message['records'][$i]['sequence'] = (int) $record['sequence'];
        $message['records'][$i]['created'] = (int) $record['created'];
    }
    return $message;
}

/** media type => [encode, decode] of the REST bodies the PHP server speaks. */
function wsb_rest_formats(): array
{
    return [
        'application/json' => [
            fn (array $body) => json_encode($body, JSON_UNESCAPED_SLASHES
                | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR),
            fn (string $text) => json_decode($text, true, 512, JSON_THROW_ON_ERROR),
        ],
        'application/xml' => ['wsb_xml_encode', 'wsb_xml_decode'],
    ];
}

function wsb_serve_rest(WsbStore $store, string $path, string $method): void
{
    $formats = wsb_rest_formats();
    $names = implode(', ', array_keys($formats));
    // The first type Accept names that the server speaks; JSON for */*.
    $reply_type = null;
    foreach (explode(',', $_SERVER['HTTP_ACCEPT'] ?? '*/*') as $range) {
        $range = trim((string) strtok($range, ';'));
        if (isset($formats[$range]) || $range === '*/*' || $range === 'application/*') {
            $reply_type = isset($formats[$range]) ? $range : 'application/json';
            break;
        }
    }
    if ($reply_type === null) {
        wsb_reply(406, 'text/plain', "the PHP server's REST bodies are $names\n");
        return;
    }
    $send = fn (int $status, array $body) => wsb_reply($status, $reply_type,
        $formats[$reply_type][0]($body));
    $request_body = function () use ($formats, $names): ?array {
        $type = trim((string) strtok($_SERVER['CONTENT_TYPE'] ?? '', ';'));
        if (!isset($formats[$type])) {
            wsb_reply(415, 'text/plain', "the PHP server's REST bodies are $names\n");
            return null;
        }
        try {
            $body = $formats[$type][1](file_get_contents('php://input'));
        } catch (Exception $e) {
            $body = null;
        }
        if (!is_array($body) || count($body) !== 1) {
            wsb_reply(400, 'text/plain', "the body is not a $type payload\n");
            return null;
        }
        return $body;
    };
    $allow = function (array $methods) use ($method): bool {
        if (in_array($method, $methods, true)) {
            return true;
        }
        header('Allow: ' . implode(', ', $methods));
        wsb_reply(405, 'text/plain', "$method is not allowed here\n");
        return false;
    };

    if ($path === '/ping') {
        $allow(['GET']) && $send(200, ['text' => 'pong']);
    } elseif (str_starts_with($path, '/payloads/')) {
        if ($allow(['GET'])) {
            $body = $store->payload(substr($path, strlen('/payloads/')));
            $body === null ? wsb_reply(404, 'text/plain', "no such payload here\n")
                : $send(200, $body);
        }
    } elseif ($path === '/echo') {
        if ($allow(['POST']) && ($body = $request_body()) !== null) {
            $send(200, $body);
        }
    } elseif ($path === '/queues') {
        if ($allow(['POST'])) {
            http_response_code(201);
            header('Location: /queues/' . $store->register());
        }
    } elseif (preg_match('#^/queues/([0-9]+)$#', $path, $match)) {
        $queue = $match[1];
        $missing = fn () => wsb_reply(404, 'text/plain', "no queue '$queue'\n");
        if ($method === 'PUT') {
            if (($body = $request_body()) === null) {
                return;
            }
            if (!is_array($body['message'] ?? null)) {
                wsb_reply(400, 'text/plain', "the body is not a message\n");
            } elseif ($store->send($queue, $body['message']) === null) {
                $missing();
            } else {
                http_response_code(204);
            }
        } elseif ($method === 'GET') {
            $messages = $store->receive($queue);
            $messages === null ? $missing() : $send(200, ['messages' => $messages]);
        } elseif ($allow(['GET', 'PUT', 'DELETE'])) {
            $store->unregister($queue) === null ? $missing() : http_response_code(204);
        }
    } else {
        wsb_reply(404, 'text/plain', "no route $path on the PHP server\n");
    }
}
