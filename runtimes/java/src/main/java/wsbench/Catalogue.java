package wsbench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The payload catalogue as tests/payload_json prints it (the json codec's bodies), and the deep
 * comparison every reply goes through.
 */
final class Catalogue {
  // xmlrpc-c's double formatting and parsing move a value by at most 17 ulps
  // (src/xmlrpc/xmlrpc_codec.cpp); the suite's own xmlrpc tests allow 1e-14.
  static final double RELATIVE_TOLERANCE = 1e-14;
  static final ObjectMapper MAPPER = new ObjectMapper();

  private final Map<String, JsonNode> bodies = new HashMap<>();
  private final Map<String, Model.Body> models = new ConcurrentHashMap<>();

  Catalogue(String payloadJson, List<String> labels) throws IOException, InterruptedException {
    if (labels.isEmpty())
      return;
    final List<String> command = new ArrayList<>();
    command.add(payloadJson);
    command.addAll(labels);
    final Process process = new ProcessBuilder(command).start();
    final List<String> lines = new ArrayList<>();
    try (BufferedReader out = new BufferedReader(
             new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) lines.add(line);
    }
    final String errors =
        new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (process.waitFor() != 0 || lines.size() != labels.size())
      throw new IOException(payloadJson + " printed " + lines.size() + " lines for " + labels.size()
          + " labels: " + errors.strip());
    for (int i = 0; i < labels.size(); ++i)
      bodies.put(labels.get(i), MAPPER.readTree(lines.get(i)));
  }

  JsonNode body(String label) {
    final JsonNode out = bodies.get(label);
    if (out == null)
      throw new IllegalArgumentException("not in the catalogue: " + label);
    return out;
  }

  /** The payload bound to the model, once; null if the catalogue does not hold it. */
  Model.Body model(String label) {
    final JsonNode body = bodies.get(label);
    if (body == null)
      return null;
    return models.computeIfAbsent(label, l -> {
      try {
        return MAPPER.treeToValue(body, Model.Body.class);
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "the catalogue's " + l + " does not bind: " + e.getMessage(), e);
      }
    });
  }

  Model.Msg message(String label) {
    final Model.Body body = model(label);
    if (body == null || body.message == null)
      throw new IllegalArgumentException("no message in the catalogue: " + label);
    return body.message;
  }

  /** The first place where got differs from want, or null. */
  static String difference(JsonNode got, JsonNode want, String where) {
    if (want.isNumber() && got.isNumber()) {
      if (want.isIntegralNumber() && got.isIntegralNumber())
        return want.longValue() == got.longValue() ? null : where + ": " + got + " != " + want;
      final double g = got.doubleValue();
      final double w = want.doubleValue();
      final boolean close =
          g == w || Math.abs(g - w) <= RELATIVE_TOLERANCE * Math.max(Math.abs(g), Math.abs(w));
      return close ? null : where + ": " + got + " != " + want;
    }
    if (got.getNodeType() != want.getNodeType())
      return where + ": " + got.getNodeType() + " " + shorten(got) + ", want " + want.getNodeType()
          + " " + shorten(want);
    if (want.isObject()) {
      final List<String> gotNames = names(got);
      final List<String> wantNames = names(want);
      gotNames.sort(null);
      wantNames.sort(null);
      if (!gotNames.equals(wantNames))
        return where + ": members " + gotNames + ", want " + wantNames;
      for (String name : wantNames) {
        final String found = difference(got.get(name), want.get(name), where + "." + name);
        if (found != null)
          return found;
      }
      return null;
    }
    if (want.isArray()) {
      if (got.size() != want.size())
        return where + ": " + got.size() + " items, want " + want.size();
      for (int i = 0; i < want.size(); ++i) {
        final String found = difference(got.get(i), want.get(i), where + "[" + i + "]");
        if (found != null)
          return found;
      }
      return null;
    }
    return got.equals(want) ? null : where + ": " + shorten(got) + " != " + shorten(want);
  }

  private static List<String> names(JsonNode node) {
    final List<String> out = new ArrayList<>();
    for (Iterator<String> it = node.fieldNames(); it.hasNext();) out.add(it.next());
    return out;
  }

  private static String shorten(JsonNode node) {
    final String text = node.toString();
    return text.length() <= 80 ? text : text.substring(0, 77) + "...";
  }
}
