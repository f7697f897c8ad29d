import SwiftUI
import Zephyr
import ZephyrSwiftUI

/// A sample article.
struct Article: Identifiable, Sendable {
  let id: UInt32
  let slug: String
  let title: String

  static let samples: [Article] = (1...40).map { number in
    Article(id: UInt32(1_000 + number), slug: "article-\(number)", title: "Article \(number)")
  }
}

/// The article list: a star toggles a favorite (`insert`/`remove` into a `.set` key), and
/// opening an article marks it read (`insert` into a `PackedSet`).
struct ArticlesView: View {
  @SyncedDefault(Library.favorites) private var favorites
  @SyncedDefault(Library.readHistory) private var readHistory
  @SyncedDefault(Settings.hidesRead) private var hidesRead
  @SyncedDefault(Settings.fontSize) private var fontSize
  @SyncedDefault(Settings.nickname) private var nickname

  var body: some View {
    NavigationStack {
      List {
        Section {
          Text("Hello, \(nickname ?? "reader"): \(readHistory.count) read, \(favorites.count) favorites")
            .font(.footnote)
            .foregroundStyle(.secondary)
        }
        ForEach(visibleArticles) { article in
          row(for: article)
        }
      }
      .navigationTitle("Articles")
      .navigationDestination(for: UInt32.self) { id in
        ArticleView(article: Article.samples.first { $0.id == id }, fontSize: fontSize)
          .onAppear { Zephyr.insert(id, into: Library.readHistory) }  // one write, one coalesced push
      }
      .toolbar {
        Button(hidesRead ? "Show read" : "Hide read") { hidesRead.toggle() }
      }
    }
  }

  private var visibleArticles: [Article] {
    hidesRead ? Article.samples.filter { !readHistory.contains($0.id) } : Article.samples
  }

  private func row(for article: Article) -> some View {
    let isFavorite = favorites.contains(article.slug)
    return HStack {
      NavigationLink(value: article.id) {
        Text(article.title)
          .foregroundStyle(readHistory.contains(article.id) ? .secondary : .primary)
      }
      Button {
        // Element edits: each writes UserDefaults at once and pushes the key, merged by
        // `.set` with what other devices did meanwhile.
        if isFavorite {
          Zephyr.remove(article.slug, from: Library.favorites)
        } else {
          Zephyr.insert(article.slug, into: Library.favorites)
        }
      } label: {
        Image(systemName: isFavorite ? "star.fill" : "star")
      }
      .buttonStyle(.borderless)
      .accessibilityLabel(isFavorite ? "Remove from favorites" : "Add to favorites")
    }
  }
}

/// One article, in the synced text size.
struct ArticleView: View {
  let article: Article?
  let fontSize: Double

  var body: some View {
    ScrollView {
      Text("Text of \(article?.title ?? "an article that is gone").")
        .font(.system(size: fontSize))
        .padding()
    }
    .navigationTitle(article?.title ?? "")
  }
}
