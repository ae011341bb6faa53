<?php
// PHP's clients of the wsbench service, each the way a PHP user calls it:
//   soap    SoapClient from the WSDL the server publishes (GET /?wsdl)
//   xmlrpc  the xmlrpc extension's xmlrpc_encode_request / xmlrpc_decode over
//           curl, at /RPC2?int64=string (64-bit fields as decimal strings)
//   json    curl + json_encode / json_decode against the REST API
//   xml     curl + SimpleXML against the REST API
// Each operation method is the timed call: marshal, HTTP, unmarshal into
// PHP values (for xml, SimpleXML's lazy tree walked into arrays, as a
// client reading the values does). The static methods are not timed: they
// build arguments from the catalogue and turn replies into the json
// codec's shape for wsb_check().

declare(strict_types=1);

require_once __DIR__ . '/replies.php';
require_once __DIR__ . '/xml_bodies.php';

abstract class WsbClient
{
    /** Relative difference allowed in doubles (only xmlrpc-c rounds). */
    public const TOLERANCE = 0.0;

    abstract public function ping(): mixed;

    abstract public function get(mixed $argument): mixed;

    /** The new queue's id. */
    abstract public function register(): string;

    /** True when the server acknowledged the message. */
    abstract public function send(string $queue, mixed $message): bool;

    abstract public function receive(string $queue): mixed;

    /** True when the server acknowledged the deletion. */
    abstract public function unregister(string $queue): bool;

    /** get's argument for a catalogue label. */
    abstract public static function getArgument(string $label): mixed;

    /** send's argument for a catalogue body {"message": ...}. */
    abstract public static function messageArgument(array $body): mixed;

    /** ping's reply as its text. */
    abstract public static function pingText(mixed $reply): mixed;

    /** get's reply as the json codec's body. */
    abstract public static function payload(mixed $reply): mixed;

    /** receive's reply as a list of the json codec's messages. */
    abstract public static function messages(mixed $reply): mixed;

    /** What get's reply must be, from the catalogue body. */
    public static function expectedPayload(array $body): array
    {
        return $body;
    }

    /** What a received message must be, from the catalogue's message. */
    public static function expectedMessage(array $message): array
    {
        return $message;
    }
}

final class SoapRpcClient extends WsbClient
{
    private SoapClient $client;

    public function __construct(string $address, array $headers = [])
    {
        // The WSDL is parsed once per process and kept in memory, never in
        // PHP's disk cache, so every cold call parses it.
        $options = [
            'cache_wsdl' => WSDL_CACHE_MEMORY,
            'features' => SOAP_SINGLE_ELEMENT_ARRAYS,
            'exceptions' => true,
            'keep_alive' => true,
            'connection_timeout' => 10,
        ];
        if ($headers !== []) {
            $options['stream_context'] = stream_context_create(
                ['http' => ['header' => implode("\r\n", $headers)]]);
        }
        $this->client = new SoapClient("http://$address/?wsdl", $options);
    }

    public function ping(): mixed
    {
        return $this->client->ping();
    }

    public function get(mixed $argument): mixed
    {
        return $this->client->get($argument);
    }

    public function register(): string
    {
        return (string) ($this->client->RegisterClient()->queue ?? '');
    }

    public function send(string $queue, mixed $message): bool
    {
        // SendMessageResponse has no parts.
        return get_object_vars($this->client->SendMessage(['queue' => $queue, 'message' => $message]))
            === [];
    }

    public function receive(string $queue): mixed
    {
        return $this->client->ReceiveMessage(['queue' => $queue]);
    }

    public function unregister(string $queue): bool
    {
        return get_object_vars($this->client->UnregisterClient(['queue' => $queue])) === [];
    }

    public static function getArgument(string $label): mixed
    {
        [$kind, $n] = explode('/', $label);
        return ['kind' => $kind, 'n' => (int) $n];
    }

    public static function messageArgument(array $body): mixed
    {
        // The schema's message holds its records as repeated <record>.
        $message = $body['message'];
        if (isset($message['records'])) {
            $message['record'] = $message['records'];
            unset($message['records']);
        }
        return $message;
    }

    public static function pingText(mixed $reply): mixed
    {
        return $reply->reply ?? $reply;
    }

    public static function payload(mixed $reply): mixed
    {
        $chosen = is_object($reply) ? get_object_vars($reply) : [];
        if (count($chosen) !== 1) {
            return ['not one payload' => array_keys($chosen)];
        }
        $kind = array_key_first($chosen);
        $value = $chosen[$kind];
        return [$kind => match ($kind) {
            'ints', 'strings' => $value->item ?? [],
            'objects' => array_map('get_object_vars', $value->object ?? []),
            'message' => self::message($value),
            default => $value,
        }];
    }

    public static function messages(mixed $reply): mixed
    {
        return is_object($reply) ? array_map([self::class, 'message'], $reply->message ?? [])
            : $reply;
    }

    private static function message(object $m): array
    {
        $out = ['recipient' => $m->recipient, 'sender' => $m->sender, 'authToken' => $m->authToken,
            'timestamp' => $m->timestamp];
        if (!empty($m->record)) {
            $out['records'] = array_map('get_object_vars', $m->record);
        }
        if (isset($m->attachment)) {
            $out['attachment'] = base64_encode($m->attachment);
        }
        return $out;
    }
}

/** One keep-alive curl handle, for the HTTP clients below. */
final class CurlConnection
{
    private CurlHandle $handle;
    private stdClass $seen;  // what the header callback saw: location

    /** @param array $headers sent with every request, unless request() names others */
    public function __construct(private string $base, private array $headers)
    {
        $this->handle = curl_init();
        $seen = $this->seen = new stdClass();
        $seen->location = '';
        curl_setopt_array($this->handle, [
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TCP_NODELAY => true,
            CURLOPT_CONNECTTIMEOUT => 10,
            CURLOPT_TIMEOUT => 60,
            // Static, and writing to an object of its own: a closure that
            // held $this would make a cycle (handle, closure, this) that
            // only the cycle collector frees, leaving its connection open
            // (over 1,000 sockets in a run, beyond stream_select's limit).
            CURLOPT_HEADERFUNCTION => static function ($handle, string $line) use ($seen): int {
                if (stripos($line, 'location:') === 0) {
                    $seen->location = trim(substr($line, 9));
                }
                return strlen($line);
            },
        ]);
    }

    /** The reply's body; throws unless the status is $status. */
    public function request(string $method, string $path, int $status, ?string $body = null,
        array $headers = []): string
    {
        $this->seen->location = '';
        $h = $this->handle;
        curl_setopt($h, CURLOPT_URL, $this->base . $path);
        if ($body === null) {
            curl_setopt($h, CURLOPT_HTTPGET, true);
        } else {
            curl_setopt($h, CURLOPT_POSTFIELDS, $body);
        }
        curl_setopt($h, CURLOPT_CUSTOMREQUEST, $method);
        // No "Expect: 100-continue" wait before a body over 1 KiB.
        curl_setopt($h, CURLOPT_HTTPHEADER,
            array_merge($headers === [] ? $this->headers : $headers, ['Expect:']));
        $reply = curl_exec($h);
        if ($reply === false) {
            throw new RuntimeException("$method $path: " . curl_error($h));
        }
        $got = curl_getinfo($h, CURLINFO_RESPONSE_CODE);
        if ($got !== $status) {
            throw new RuntimeException(sprintf('%s %s: HTTP %d, want %d: %s', $method, $path, $got,
                $status, substr($reply, 0, 200)));
        }
        return $reply;
    }

    /** The Location header of the last reply. */
    public function location(): string
    {
        return $this->seen->location;
    }
}

final class XmlrpcClient extends WsbClient
{
    public const TOLERANCE = 1e-14;
    private const OUTPUT = ['encoding' => 'utf-8', 'escaping' => 'markup',
        'verbosity' => 'no_white_space'];

    private CurlConnection $connection;

    public function __construct(string $address, array $headers = [])
    {
        $this->connection = new CurlConnection("http://$address",
            array_merge(['Content-Type: text/xml'], $headers));
    }

    private function call(string $method, array $params): mixed
    {
        $reply = xmlrpc_decode($this->connection->request('POST', '/RPC2?int64=string', 200,
            xmlrpc_encode_request($method, $params, self::OUTPUT)), 'utf-8');
        if (is_array($reply) && xmlrpc_is_fault($reply)) {
            throw new RuntimeException("$method: fault {$reply['faultCode']}: {$reply['faultString']}");
        }
        return $reply;
    }

    public function ping(): mixed
    {
        return $this->call('wsbench.ping', []);
    }

    public function get(mixed $argument): mixed
    {
        return $this->call('wsbench.get', [$argument]);
    }

    public function register(): string
    {
        $queue = $this->call('wsbench.registerClient', []);
        return is_string($queue) ? $queue : '';
    }

    public function send(string $queue, mixed $message): bool
    {
        return $this->call('wsbench.sendMessage', [$queue, $message]) === true;
    }

    public function receive(string $queue): mixed
    {
        return $this->call('wsbench.receiveMessages', [$queue]);
    }

    public function unregister(string $queue): bool
    {
        return $this->call('wsbench.unregisterClient', [$queue]) === true;
    }

    public static function getArgument(string $label): mixed
    {
        return $label;
    }

    public static function messageArgument(array $body): mixed
    {
        return wsb_message_int64_as_strings($body['message']);
    }

    public static function pingText(mixed $reply): mixed
    {
        return $reply;
    }

    public static function payload(mixed $reply): mixed
    {
        return $reply;
    }

    public static function messages(mixed $reply): mixed
    {
        return $reply['messages'] ?? $reply;
    }

    public static function expectedPayload(array $body): array
    {
        return isset($body['message']) ? ['message' => wsb_message_int64_as_strings($body['message'])]
            : $body;
    }

    public static function expectedMessage(array $message): array
    {
        return wsb_message_int64_as_strings($message);
    }
}

/** The REST API's routes; the subclasses say how bodies are written and read. */
abstract class RestClient extends WsbClient
{
    protected CurlConnection $connection;
    private array $body_headers;

    public function __construct(string $address, array $headers = [])
    {
        $this->connection = new CurlConnection("http://$address",
            array_merge(['Accept: ' . static::MEDIA_TYPE], $headers));
        $this->body_headers = array_merge(
            ['Accept: ' . static::MEDIA_TYPE, 'Content-Type: ' . static::MEDIA_TYPE], $headers);
    }

    abstract protected function decode(string $body): array;

    abstract protected function encode(array $body): string;

    public function ping(): mixed
    {
        return $this->decode($this->connection->request('GET', '/ping', 200));
    }

    public function get(mixed $argument): mixed
    {
        return $this->decode($this->connection->request('GET', $argument, 200));
    }

    public function register(): string
    {
        $this->connection->request('POST', '/queues', 201, '');
        $location = $this->connection->location();
        return str_starts_with($location, '/queues/') ? substr($location, strlen('/queues/')) : '';
    }

    public function send(string $queue, mixed $message): bool
    {
        return $this->connection->request('PUT', "/queues/$queue", 204, $this->encode($message),
            $this->body_headers) === '';
    }

    public function receive(string $queue): mixed
    {
        return $this->decode($this->connection->request('GET', "/queues/$queue", 200));
    }

    public function unregister(string $queue): bool
    {
        return $this->connection->request('DELETE', "/queues/$queue", 204) === '';
    }

    public static function getArgument(string $label): mixed
    {
        return "/payloads/$label";
    }

    public static function messageArgument(array $body): mixed
    {
        return $body;
    }

    public static function pingText(mixed $reply): mixed
    {
        return $reply['text'] ?? $reply;
    }

    public static function payload(mixed $reply): mixed
    {
        return $reply;
    }

    public static function messages(mixed $reply): mixed
    {
        return $reply['messages'] ?? $reply;
    }
}

final class JsonRestClient extends RestClient
{
    protected const MEDIA_TYPE = 'application/json';

    protected function decode(string $body): array
    {
        $value = json_decode($body, true, 512, JSON_THROW_ON_ERROR);
        if (!is_array($value)) {
            throw new RuntimeException('JSON reply is not an object: ' . substr($body, 0, 80));
        }
        return $value;
    }

    protected function encode(array $body): string
    {
        return json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
    }
}

final class XmlRestClient extends RestClient
{
    protected const MEDIA_TYPE = 'application/xml';

    protected function decode(string $body): array
    {
        return wsb_xml_decode($body);
    }

    protected function encode(array $body): string
    {
        return wsb_xml_encode($body);
    }
}

/** Client name => [class, the native stack it calls]. */
const WSB_CLIENTS = [
    'soap' => [SoapRpcClient::class, 'gsoap'],
    'xmlrpc' => [XmlrpcClient::class, 'xmlrpc-c'],
    'json' => [JsonRestClient::class, 'beast'],
    'xml' => [XmlRestClient::class, 'beast'],
];
