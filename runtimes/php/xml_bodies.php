<?php
// The REST API's XML bodies (src/rest/xml_codec.cpp has the shapes) read
// and written with SimpleXML, between them and the json codec's shape as
// PHP arrays. Used by the xml client and by the PHP server.

declare(strict_types=1);

const WSB_XML_NAMESPACE = 'urn:wsbench:rest';
const WSB_RECORD_INTS = ['sequence', 'created', 'priority', 'category', 'flags', 'ttl'];

/** An XML body as the json codec's body; throws on XML that does not parse. */
function wsb_xml_decode(string $body): array
{
    $previous = libxml_use_internal_errors(true);
    $root = simplexml_load_string($body, 'SimpleXMLElement', LIBXML_NONET);
    libxml_use_internal_errors($previous);
    if ($root === false) {
        $error = libxml_get_last_error();
        libxml_clear_errors();
        throw new RuntimeException('XML body does not parse: ' . ($error ? trim($error->message)
            : substr($body, 0, 80)));
    }
    $kind = $root->getName();
    $values = [];
    switch ($kind) {
        case 'text':
            return ['text' => (string) $root];
        case 'ints':
            foreach ($root->i as $i) {
                $values[] = (int) $i;
            }
            break;
        case 'strings':
            foreach ($root->s as $s) {
                $values[] = (string) $s;
            }
            break;
        case 'objects':
            foreach ($root->object as $o) {
                $values[] = ['id' => (int) $o->id, 'name' => (string) $o->name,
                    'value' => (float) $o->value, 'active' => (string) $o->active === 'true'];
            }
            break;
        case 'message':
            return ['message' => wsb_xml_message($root)];
        case 'messages':
            foreach ($root->message as $m) {
                $values[] = wsb_xml_message($m);
            }
            break;
        default:
            throw new RuntimeException("XML body of an unknown kind <$kind>");
    }
    return [$kind => $values];
}

function wsb_xml_message(SimpleXMLElement $m): array
{
    $out = ['recipient' => (string) $m->recipient, 'sender' => (string) $m->sender,
        'authToken' => (string) $m->authToken, 'timestamp' => (int) $m->timestamp];
    if (isset($m->records)) {
        $records = [];
        foreach ($m->records->record as $r) {
            $record = ['title' => (string) $r->title, 'author' => (string) $r->author,
                'body' => (string) $r->body];
            foreach (WSB_RECORD_INTS as $name) {
                $record[$name] = (int) $r->$name;
            }
            $records[] = $record;
        }
        $out['records'] = $records;
    }
    if (isset($m->attachment)) {
        $out['attachment'] = trim((string) $m->attachment);
    }
    return $out;
}

/**
 * The json codec's body as the XML codec's. Doubles are written as PHP's
 * float-to-string conversion does, which is exact with precision = -1.
 */
function wsb_xml_encode(array $body): string
{
    $kind = array_key_first($body);
    $value = $body[$kind];
    $doc = new SimpleXMLElement("<$kind xmlns=\"" . WSB_XML_NAMESPACE . '"/>');
    // Assignment escapes the text (addChild's value would not escape '&').
    switch ($kind) {
        case 'text':
            $doc[0] = $value;
            break;
        case 'ints':
            foreach ($value as $v) {
                $doc->i[] = $v;
            }
            break;
        case 'strings':
            foreach ($value as $v) {
                $doc->s[] = $v;
            }
            break;
        case 'objects':
            foreach ($value as $o) {
                $object = $doc->addChild('object');
                $object->id = $o['id'];
                $object->name = $o['name'];
                $object->value = $o['value'];
                $object->active = $o['active'] ? 'true' : 'false';
            }
            break;
        case 'message':
            wsb_xml_write_message($doc, $value);
            break;
        case 'messages':
            foreach ($value as $m) {
                wsb_xml_write_message($doc->addChild('message'), $m);
            }
            break;
        default:
            throw new InvalidArgumentException("no XML body for a payload of kind $kind");
    }
    return $doc->asXML();
}

function wsb_xml_write_message(SimpleXMLElement $doc, array $m): void
{
    $doc->recipient = $m['recipient'];
    $doc->sender = $m['sender'];
    $doc->authToken = $m['authToken'];
    $doc->timestamp = $m['timestamp'];
    if (isset($m['records'])) {
        $records = $doc->addChild('records');
        foreach ($m['records'] as $r) {
            $record = $records->addChild('record');
            foreach ($r as $name => $value) {
                $record->$name = $value;
            }
        }
    }
    if (isset($m['attachment'])) {
        $doc->attachment = $m['attachment'];
    }
}
