// The JVM's trust store (its cacerts, or -Djavax.net.ssl.trustStore) fetches URL through the proxy.
//     java Probe.java PROXY_HOST PROXY_PORT URL TOKEN
// Run by `llmproxy doctor` with the environment under test (JAVA_TOOL_OPTIONS); prints one JSON line.
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

public class Probe {
  static String quoted(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
  }

  static void say(String outcome, String detail) {
    System.out.println("{\"outcome\": " + quoted(outcome) + ", \"detail\": " + quoted(detail) + "}");
  }

  public static void main(String[] args) {
    var proxy = ProxySelector.of(new InetSocketAddress(args[0], Integer.parseInt(args[1])));
    var client = HttpClient.newBuilder().proxy(proxy).connectTimeout(Duration.ofSeconds(30)).build();
    var request = HttpRequest.newBuilder(URI.create(args[2])).timeout(Duration.ofSeconds(30)).build();
    try {
      var body = client.send(request, HttpResponse.BodyHandlers.ofString()).body();
      say(body.contains(args[3]) ? "trusted" : "failed", body.substring(0, Math.min(200, body.length())));
    } catch (javax.net.ssl.SSLHandshakeException e) {
      say("untrusted", String.valueOf(e.getMessage()));
    } catch (Exception e) {
      say("failed", e.toString());
    }
  }
}
