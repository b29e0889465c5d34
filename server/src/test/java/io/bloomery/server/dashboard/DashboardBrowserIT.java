package io.bloomery.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bloomery.server.BloomeryServer;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.UnifiedJedis;

/**
 * The dashboard in a real browser: headless Chromium (Debian's {@code chromium}) loads the pages from a running
 * server holding keys of several kinds; the DOM it builds ({@code --dump-dom}) must show the figures {@code BF.INFO}
 * gives, and its screenshots are written to {@code target/dashboard-screenshots/}. Skipped, saying why, when
 * chromium is not installed ({@code ./run-tests} installs it when apt can).
 */
class DashboardBrowserIT {
  /** A hang guard for one browser run, not a timing claim. */
  private static final long BROWSER_TIMEOUT_SECONDS = 120;

  @TempDir Path profile;

  @Test
  void chromiumShowsTheFiguresOfBfInfo_andScreenshotsArWritten() throws Exception {
    assumeTrue(installed(), "chromium is not installed (Debian package 'chromium'; ./run-tests installs it when apt can):"
        + " skipping the browser test of the dashboard");
    try (BloomeryServer server = DashboardTest.start(); UnifiedJedis j = DashboardTest.jedis(server, null)) {
      DashboardTest.populate(j);
      j.sendCommand(() -> "AGE.RESERVE".getBytes(StandardCharsets.US_ASCII), "seen", "0.01", "1000", "3600");
      j.sendCommand(() -> "AGE.ADD".getBytes(StandardCharsets.US_ASCII), "seen", "a", "b", "c");
      String base = "http://127.0.0.1:" + server.httpPort();

      Document overview = Jsoup.parse(chromium("--dump-dom", base + "/"));
      assertThat(overview.title()).isEqualTo("Bloomery dashboard");
      DashboardTest.assertOverviewMatchesBfInfo(overview, j);
      assertThat(DashboardTest.value(overview.selectFirst("tr[data-key=seen]"), "kind")).isEqualTo("aging");
      assertThat(DashboardTest.value(overview.selectFirst("tr[data-key=seen]"), "layers")).isEqualTo("4");

      Document key = Jsoup.parse(chromium("--dump-dom", base + "/key?name=urls"));
      assertThat(key.select("#fpr-curve circle.present")).hasSize(1);
      assertThat(key.select("#fpr-curve line.capacity")).hasSize(1);
      assertThat(DashboardTest.value(key.selectFirst("#figures tr:has(td)"), "items"))
          .isEqualTo(j.bfInfo("urls").get("Number of items inserted").toString());

      Path shots = Path.of("target", "dashboard-screenshots");
      Files.createDirectories(shots);
      for (String[] page : new String[][] {{"overview.png", "/"}, {"key-urls.png", "/key?name=urls"}}) {
        Path shot = shots.resolve(page[0]).toAbsolutePath();
        Files.deleteIfExists(shot);
        chromium("--window-size=1280,1000", "--screenshot=" + shot, base + page[1]);
        assertThat(shot).exists();
        byte[] png = Files.readAllBytes(shot);
        assertThat(png).startsWith(0x89, 'P', 'N', 'G');
      }
    }
  }

  /**
   * The guarded keys' tables (14 columns with headers such as "store lookups avoided") once ran past a 1280-pixel
   * window, so the model rate, insert failures, freshness lag and replication state were off screen behind a
   * horizontal scroll bar. Headers now wrap; in a 1280 x 1000 window no page of a server with guarded keys has a
   * horizontal scroll bar: the bottom rows of the screenshot (below every page's content) are the plain white page.
   */
  @Test
  void guardedKeysPagesFitA1280PixelWindowWithoutAHorizontalScrollBar(@TempDir Path tmp) throws Exception {
    assumeTrue(installed(), "chromium is not installed: skipping the dashboard's width check in a browser");
    try (BloomeryServer server = DashboardTest.start("--store", "lite=sqlite:" + tmp.resolve("guard.db"));
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      for (String key : List.of("crawl-frontier-seen", "documents")) {
        DashboardGuardedKeysTest.call(j, "GUARD.RESERVE", key, "lite", "0.01", "100000");
        DashboardGuardedKeysTest.call(j, "GUARD.MADD", key, "https://example.org/", "https://example.com/");
        DashboardGuardedKeysTest.call(j, "GUARD.MEXISTS", key, "https://example.org/", "https://example.net/");
      }
      String base = "http://127.0.0.1:" + server.httpPort();
      for (String page : List.of("/", "/guard?name=crawl-frontier-seen")) {
        Path shot = tmp.resolve("width.png").toAbsolutePath();
        Files.deleteIfExists(shot);
        chromium("--window-size=1280,1000", "--screenshot=" + shot, base + page);
        BufferedImage image = ImageIO.read(shot.toFile());
        assertThat(image.getWidth()).isEqualTo(1280);
        for (int y = image.getHeight() - 24; y < image.getHeight(); y++) {
          for (int x = 0; x < image.getWidth(); x++) {
            assertThat(image.getRGB(x, y) & 0xffffff).as("%s: pixel (%d, %d), where a horizontal scroll bar would be",
                page, x, y).isEqualTo(0xffffff);
          }
        }
      }
    }
  }

  /** Runs headless Chromium on a fresh profile and returns its standard output. */
  private String chromium(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("chromium", "--headless", "--no-sandbox", "--disable-gpu",
        "--no-first-run", "--disable-extensions", "--disable-sync", "--disable-background-networking",
        "--user-data-dir=" + profile));
    command.addAll(List.of(args));
    Path out = Files.createTempFile(profile.getParent(), "chromium", ".out");
    Process process = new ProcessBuilder(command).redirectOutput(out.toFile())
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try {
      assertThat(process.waitFor(BROWSER_TIMEOUT_SECONDS, TimeUnit.SECONDS)).as("chromium finished").isTrue();
      assertThat(process.exitValue()).as("chromium's exit status").isZero();
      return Files.readString(out);
    } finally {
      process.destroyForcibly();
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      Files.deleteIfExists(out);
    }
  }

  private static boolean installed() {
    try {
      return new ProcessBuilder("sh", "-c", "command -v chromium").start().waitFor() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
